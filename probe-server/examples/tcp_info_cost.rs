//! What one `TCP_INFO` snapshot costs: reads the facts of a loopback TCP
//! connection many times and prints the time per read (run it in release:
//! `cargo run --release -p h123 --example tcp_info_cost`).

use h123::probe::tcp_info::TcpSocket;
use h123::probe::trace::now;
use std::net::{TcpListener, TcpStream};

fn main() -> std::io::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let client = TcpStream::connect(listener.local_addr()?)?;
    let _server = listener.accept()?;
    let Some(socket) = TcpSocket::watch(&client) else {
        eprintln!("could not keep the socket");
        std::process::exit(1);
    };
    if socket.info().is_none() {
        println!("no TCP_INFO on this system: every snapshot is None");
        return Ok(());
    }
    const READS: u32 = 200_000;
    for round in 1..=5 {
        let start = now();
        let mut filled = 0u32;
        for _ in 0..READS {
            filled += u32::from(std::hint::black_box(socket.info()).is_some());
        }
        let per_read = now().duration_since(start).as_nanos() as f64 / f64::from(READS);
        println!("round {round}: {per_read:.0} ns per TCP_INFO read ({filled} of {READS} filled)");
    }
    Ok(())
}
