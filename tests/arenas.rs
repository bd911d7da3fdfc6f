//! Every thread gets an allocator arena of its own once `main` has called
//! `haptics::private_arenas` (docs/haptics.md): more threads than glibc's
//! default limit (8 arenas per core) each allocate, and the allocator then
//! reports an arena per thread. A harness of its own, since the setting
//! must come before the process has started threads.

use std::sync::{Arc, Barrier};

const THREADS: usize = 40;

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
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert!(
            THREADS > 8 * cores,
            "more threads than glibc's default arenas"
        );
        let started = Arc::new(Barrier::new(THREADS + 1));
        let counted = Arc::new(Barrier::new(THREADS + 1));
        let threads: Vec<_> = (0..THREADS)
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
            arenas > THREADS,
            "{arenas} arenas for {THREADS} threads and the main thread"
        );
        println!("test every_thread_gets_an_arena_of_its_own ... ok ({arenas} arenas)");
    }
}
