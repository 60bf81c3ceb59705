//! Thread pinning and memory binding through raw system calls (`libc`, no C
//! libraries): `sched_setaffinity` / `sched_getaffinity` / `sched_getcpu`
//! and `mbind`, plus page-aligned buffers.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::path::Path;

use crate::LiveError;
use crate::sysfs::parse_cpulist;

fn os_err(call: &'static str) -> LiveError {
    LiveError::Os {
        call,
        err: std::io::Error::last_os_error(),
    }
}

/// CPUs this process may run on: the affinity mask as it was at the first
/// call (threads inherit their creator's mask, so after pinning one thread
/// the current mask would shrink to that CPU).
pub fn allowed_cpus() -> Result<Vec<u32>, LiveError> {
    static INITIAL: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    if let Some(v) = INITIAL.get() {
        return Ok(v.clone());
    }
    let v = current_mask()?;
    Ok(INITIAL.get_or_init(|| v).clone())
}

/// The calling thread's affinity mask now.
pub fn current_mask() -> Result<Vec<u32>, LiveError> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it for pid 0 (us).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(os_err("sched_getaffinity"));
        }
        Ok((0..libc::CPU_SETSIZE as u32)
            .filter(|&c| libc::CPU_ISSET(c as usize, &set))
            .collect())
    }
}

/// The CPU the calling thread runs on now.
pub fn current_cpu() -> i32 {
    // SAFETY: no arguments; returns -1 on error.
    unsafe { libc::sched_getcpu() }
}

fn list(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

/// Pins the calling thread to `cpu` and checks with `sched_getcpu`.
pub fn pin_current_thread(cpu: u32) -> Result<(), LiveError> {
    let allowed = allowed_cpus()?;
    if !allowed.contains(&cpu) {
        return Err(LiveError::CpuNotAllowed {
            cpu,
            allowed: list(&allowed),
        });
    }
    // SAFETY: a zeroed cpu_set_t with one bit set, for the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(os_err("sched_setaffinity"));
        }
    }
    // The kernel migrates us before sched_setaffinity returns.
    let got = current_cpu();
    if got != cpu as i32 {
        return Err(LiveError::PinFailed { want: cpu, got });
    }
    Ok(())
}

/// NUMA nodes the host has (from `sysfs_root/devices/system/node/online`).
pub fn host_nodes(sysfs_root: &Path) -> Result<Vec<u32>, LiveError> {
    let p = sysfs_root.join("devices/system/node/online");
    let text = std::fs::read_to_string(&p).map_err(|error| LiveError::SysfsRead {
        path: p.display().to_string(),
        error,
    })?;
    parse_cpulist(&text).ok_or_else(|| LiveError::Sysfs {
        path: p.display().to_string(),
        what: "not a node list",
    })
}

/// A zeroed, page-aligned buffer (for mbind and for replay footprints).
pub struct PageBuf {
    ptr: *mut u8,
    layout: Layout,
    /// For a huge-page buffer: the whole mapping (base, length) to unmap.
    mapping: Option<(*mut libc::c_void, usize)>,
}

/// Size of a transparent huge page on x86_64.
pub const HUGE_PAGE: usize = 2 << 20;

// SAFETY: PageBuf owns its allocation exclusively; sending it moves ownership.
unsafe impl Send for PageBuf {}

impl PageBuf {
    pub fn new(bytes: usize) -> Result<PageBuf, LiveError> {
        let layout = Layout::from_size_align(bytes.max(4096).div_ceil(4096) * 4096, 4096)
            .map_err(|_| LiveError::Layout { bytes })?;
        // SAFETY: non-zero size, valid alignment.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(LiveError::Alloc(bytes));
        }
        Ok(PageBuf {
            ptr,
            layout,
            mapping: None,
        })
    }

    /// A zeroed buffer of 2 MiB-aligned anonymous memory advised
    /// `MADV_HUGEPAGE` before first touch, so the kernel backs it with
    /// transparent huge pages where it can ([`anon_huge_bytes`] tells).
    pub fn huge(bytes: usize) -> Result<PageBuf, LiveError> {
        let size = bytes.max(1).div_ceil(HUGE_PAGE) * HUGE_PAGE;
        let len = size + HUGE_PAGE;
        // SAFETY: an anonymous private mapping; no file, no fixed address.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(os_err("mmap"));
        }
        let aligned = (base as usize).div_ceil(HUGE_PAGE) * HUGE_PAGE;
        // SAFETY: [aligned, aligned + size) lies inside the mapping.
        if unsafe { libc::madvise(aligned as *mut libc::c_void, size, libc::MADV_HUGEPAGE) } != 0 {
            let e = os_err("madvise(MADV_HUGEPAGE)");
            // SAFETY: unmapping what we mapped above.
            unsafe { libc::munmap(base, len) };
            return Err(e);
        }
        let layout = Layout::from_size_align(size, HUGE_PAGE)
            .map_err(|_| LiveError::Layout { bytes: size })?;
        Ok(PageBuf {
            ptr: aligned as *mut u8,
            layout,
            mapping: Some((base, len)),
        })
    }
    pub fn len(&self) -> usize {
        self.layout.size()
    }
    pub fn is_empty(&self) -> bool {
        self.layout.size() == 0
    }
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }
    pub fn as_slice_u64(&mut self) -> &mut [u64] {
        // SAFETY: the allocation is 4096-aligned, zeroed, and len/8 u64s long.
        unsafe { std::slice::from_raw_parts_mut(self.ptr as *mut u64, self.layout.size() / 8) }
    }
}

impl Drop for PageBuf {
    fn drop(&mut self) {
        match self.mapping {
            // SAFETY: mapped with this base and length in `huge`.
            Some((base, len)) => unsafe {
                libc::munmap(base, len);
            },
            // SAFETY: allocated with this layout in `new`.
            None => unsafe { dealloc(self.ptr, self.layout) },
        }
    }
}

const MPOL_BIND: i32 = 2;

/// Binds `buf`'s pages to `node` (MPOL_BIND). A node the host lacks is an
/// error before any system call is made.
pub fn bind_to_node(buf: &mut PageBuf, node: u32, sysfs_root: &Path) -> Result<(), LiveError> {
    let nodes = host_nodes(sysfs_root)?;
    if !nodes.contains(&node) {
        return Err(LiveError::NoSuchNode {
            node,
            nodes: list(&nodes),
        });
    }
    let mut mask = [0u64; 16];
    mask[(node / 64) as usize] |= 1 << (node % 64);
    // SAFETY: buf is a live page-aligned allocation of buf.len() bytes; the
    // mask holds 1024 bits; mbind only changes the pages' policy.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            buf.as_mut_ptr() as *mut libc::c_void,
            buf.len() as libc::c_ulong,
            MPOL_BIND,
            mask.as_ptr(),
            1024 as libc::c_ulong,
            0u32,
        )
    };
    if r != 0 {
        return Err(os_err("mbind"));
    }
    Ok(())
}

/// Whether the kernel backs memory a process asks for with `madvise`
/// (`MADV_HUGEPAGE`) by transparent huge pages: `Ok` when
/// `sysfs_root/kernel/mm/transparent_hugepage/enabled` selects `[always]`
/// or `[madvise]`, else the reason (`[never]`, or the file is missing).
pub fn thp_offered(sysfs_root: &Path) -> Result<(), LiveError> {
    let p = sysfs_root.join("kernel/mm/transparent_hugepage/enabled");
    let file = p.display().to_string();
    match std::fs::read_to_string(&p) {
        Ok(text) if text.contains("[always]") || text.contains("[madvise]") => Ok(()),
        Ok(text) => Err(LiveError::HugePagesOff {
            file,
            setting: text.trim().to_string(),
        }),
        Err(error) => Err(LiveError::HugePagesUnknown { file, error }),
    }
}

/// Anonymous memory of this process backed by transparent huge pages
/// (`AnonHugePages` of `/proc/self/smaps_rollup`), in bytes; 0 if unknown.
pub fn anon_huge_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("AnonHugePages:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_pages_are_offered_when_the_kernel_selects_always_or_madvise() {
        let dir = std::env::temp_dir().join(format!("numasim-thp-{}", std::process::id()));
        let mm = dir.join("kernel/mm/transparent_hugepage");
        std::fs::create_dir_all(&mm).unwrap();
        for (text, offered) in [
            ("always [madvise] never\n", true),
            ("[always] madvise never\n", true),
            ("always madvise [never]\n", false),
        ] {
            std::fs::write(mm.join("enabled"), text).unwrap();
            assert_eq!(thp_offered(&dir).is_ok(), offered, "{text}");
        }
        let e = thp_offered(&dir).unwrap_err().to_string();
        assert!(
            e.ends_with("enabled: reads \"always madvise [never]\""),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(thp_offered(&dir).is_err(), "no such file: not offered");
    }

    #[test]
    fn pin_and_verify_with_getcpu() {
        let allowed = allowed_cpus().unwrap();
        assert!(!allowed.is_empty());
        for &cpu in &allowed {
            let h = std::thread::spawn(move || {
                pin_current_thread(cpu).unwrap();
                // Still there after some work.
                let mut x = 0u64;
                for i in 0..1_000_000u64 {
                    x = x.wrapping_add(i * i);
                }
                std::hint::black_box(x);
                current_cpu()
            });
            assert_eq!(h.join().unwrap(), cpu as i32);
        }
    }

    #[test]
    fn a_cpu_outside_the_allowed_set_is_a_clear_error() {
        let e = pin_current_thread(4000).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cpu 4000 is not one this process may run on (allowed: "),
            "{e}"
        );
    }

    #[test]
    fn mbind_to_a_missing_node_is_a_clean_error_and_to_node_0_works() {
        let root = Path::new("/sys");
        let nodes = host_nodes(root).unwrap();
        let mut buf = PageBuf::new(1 << 20).unwrap();
        let missing = nodes.iter().max().unwrap() + 1;
        let e = bind_to_node(&mut buf, missing, root).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "node {missing} does not exist on this host (nodes: {})",
                list(&nodes)
            )
        );
        bind_to_node(&mut buf, nodes[0], root).unwrap();
        buf.as_slice_u64()[1000] = 7;
        assert_eq!(buf.as_slice_u64()[1000], 7);
    }
}
