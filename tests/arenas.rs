//! Every thread gets an allocator arena of its own once `main` has called
//! `haptics::private_arenas` (docs/haptics.md): more threads than glibc's
//! default limit (8 arenas per core) each allocate, and the allocator then
//! reports an arena per thread. A harness of its own, since the setting
//! must come before the process has started threads. The threads are
//! 8 per core and 8 more: above glibc's limit, within the one set.

use std::sync::{Arc, Barrier};

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn arenas() -> usize {
    let file = tempfile::NamedTempFile::new().expect("a temporary file");
    let path = std::ffi::CString::new(file.path().to_str().expect("a UTF-8 path")).unwrap();
    // SAFETY: a valid path and mode; malloc_info writes to the open
    // stream, which is closed once.
    unsafe {
        let stream = libc::fopen(path.as_ptr(), c"w".as_ptr());
        assert!(!stream.is_null());
        assert_eq!(libc::malloc_info(0, stream), 0);
        libc::fclose(stream);
    }
    let text = std::fs::read_to_string(file.path()).unwrap();
    text.matches("<heap nr=").count()
}

fn main() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        assert!(tessera::haptics::private_arenas());
        // More threads than glibc's default limit on any machine.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let thread_count = 8 * cores + 8;
        let started = Arc::new(Barrier::new(thread_count + 1));
        let counted = Arc::new(Barrier::new(thread_count + 1));
        let threads: Vec<_> = (0..thread_count)
            .map(|_| {
                let (started, counted) = (Arc::clone(&started), Arc::clone(&counted));
                std::thread::spawn(move || {
                    let block = std::hint::black_box(vec![1u8; 4096]);
                    started.wait();
                    counted.wait();
                    drop(block);
                })
            })
            .collect();
        started.wait();
        let arenas = arenas();
        counted.wait();
        for thread in threads {
            thread.join().unwrap();
        }
        // The main thread's arena and one per thread.
        assert!(
            arenas > thread_count,
            "{arenas} arenas for {thread_count} threads and the main thread"
        );
        println!("test every_thread_gets_an_arena_of_its_own ... ok ({arenas} arenas)");
    }
}
