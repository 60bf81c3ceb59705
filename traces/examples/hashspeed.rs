fn main() {
    let v = vec![7u8; 256 << 20];
    let t = std::time::Instant::now();
    let mut acc = 0u64;
    for c in v.chunks(1 << 20) {
        acc ^= xxhash_rust::xxh3::xxh3_64(c);
    }
    let dt = t.elapsed();
    eprintln!(
        "xxh3: {:.2} GB/s ({acc})",
        (256u64 << 20) as f64 / dt.as_secs_f64() / 1e9
    );
}
