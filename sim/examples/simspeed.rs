fn main() {
    let path = std::env::args().nth(1).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    let mut src = traces::registry::open(Box::new(f), Some(&path), None).unwrap();
    let t = std::time::Instant::now();
    let recs: Vec<traces::Access> = traces::collect_all(src.as_mut())
        .unwrap()
        .iter()
        .map(|r| r.core())
        .collect();
    eprintln!("decode single-thread: {:?} for {}", t.elapsed(), recs.len());
    let g = |s: &str| s.parse::<sim::Geometry>().unwrap();
    let cfg = sim::CgConfig {
        i1: g("32768,8,64"),
        d1: g("32768,8,64"),
        ll: g("1048576,16,64"),
    };
    for _ in 0..3 {
        let mut cg = sim::Cachegrind::new(&cfg);
        let mut buf = Vec::with_capacity(4096);
        let mut copy = std::time::Duration::ZERO;
        let t = std::time::Instant::now();
        for chunk in recs.chunks(4096) {
            let c0 = std::time::Instant::now();
            buf.clear();
            buf.extend_from_slice(chunk);
            copy += c0.elapsed();
            cg.run(&buf);
        }
        let dt = t.elapsed() - copy;
        eprintln!(
            "sim: {:?} = {:.2} ns/rec  Ir={}",
            dt,
            dt.as_nanos() as f64 / recs.len() as f64,
            cg.events().ir
        );
    }
}
