//! The `tessera` command.

mod cli;

fn main() -> std::process::ExitCode {
    // Before any thread starts (the allocator fixes its arena limit once
    // threads outnumber 8 arenas).
    tessera::haptics::private_arenas();
    cli::main()
}
