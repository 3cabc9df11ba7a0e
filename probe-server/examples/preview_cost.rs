//! What a link preview picture costs: reads a probe's record (the JSON of
//! `GET /api/v1/probes/{id}`), draws its 1200×630 PNG as `h123 serve` does many times, prints the
//! time per picture and its size, and writes it to a file (run it in release:
//! `cargo run --release -p h123 --example preview_cost -- record.json out.png`).

use h123::api::preview::raster::png;
use h123::api::svg::{HEIGHT, WIDTH, preview};
use h123::probe::trace::now;
use h123_shared::api::ProbeRecord;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [record, out] = args.as_slice() else {
        eprintln!("usage: preview_cost RECORD.json OUT.png");
        std::process::exit(2);
    };
    let record: ProbeRecord = serde_json::from_slice(&std::fs::read(record)?)?;
    // The first one loads the font.
    let picture = png(&preview(&record), WIDTH, HEIGHT)?;
    const PICTURES: u32 = 20;
    for round in 1..=3 {
        let start = now();
        for _ in 0..PICTURES {
            std::hint::black_box(png(&preview(&record), WIDTH, HEIGHT)?);
        }
        let per = now().duration_since(start).as_secs_f64() * 1000.0 / f64::from(PICTURES);
        println!("round {round}: {per:.1} ms per picture (the drawing and its PNG)");
    }
    std::fs::write(out, &picture)?;
    println!(
        "{} bytes, {WIDTH}×{HEIGHT}, {} attempt(s), written to {out}",
        picture.len(),
        record
            .result
            .runs
            .iter()
            .map(|r| r.attempts.len())
            .sum::<usize>()
    );
    Ok(())
}
