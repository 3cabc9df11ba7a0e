//! SVG to PNG on the server (`resvg`), with the font the binary carries (DejaVu Sans): the host's
//! fonts are never read, nor any file or URL an SVG names.

use resvg::tiny_skia::{Color, Pixmap, Transform};
use resvg::usvg::{self, ImageHrefResolver, fontdb};
use std::sync::{Arc, OnceLock};

/// DejaVu Sans (Bitstream Vera licence, `assets/DejaVuSans-LICENSE.txt`).
const FONT: &[u8] = include_bytes!("../../../assets/DejaVuSans.ttf");

/// The font database, loaded once.
fn fonts() -> Arc<fontdb::Database> {
    static FONTS: OnceLock<Arc<fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = fontdb::Database::new();
            db.load_font_data(FONT.to_vec());
            db.set_sans_serif_family("DejaVu Sans");
            Arc::new(db)
        })
        .clone()
}

/// `svg` drawn as a `width`×`height` PNG on white: scaled to fit, centred across, from the top.
///
/// # Errors
/// The SVG does not parse, or the picture cannot be made or encoded.
pub fn png(svg: &str, width: u32, height: u32) -> Result<Vec<u8>, String> {
    let options = usvg::Options {
        font_family: "DejaVu Sans".to_owned(),
        fontdb: fonts(),
        // Our drawings hold no images: resolve none, so no file is read.
        image_href_resolver: ImageHrefResolver {
            resolve_data: Box::new(|_, _, _| None),
            resolve_string: Box::new(|_, _| None),
        },
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &options).map_err(|e| e.to_string())?;
    let mut pixmap = Pixmap::new(width, height).ok_or("empty picture")?;
    pixmap.fill(Color::WHITE);
    let size = tree.size();
    let (w, h) = (width as f32, height as f32);
    let scale = (w / size.width()).min(h / size.height());
    let x = (w - size.width() * scale) / 2.0;
    resvg::render(
        &tree,
        Transform::from_row(scale, 0.0, 0.0, scale, x, 0.0),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The RGBA pixels of a PNG, and its size.
    fn decode(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    #[test]
    fn text_is_drawn_with_the_embedded_font_and_shapes_with_their_colours() {
        let svg = r##"<svg xmlns="http://www.w3.org/2000/svg" width="120" height="63" font-family="Helvetica, sans-serif"><rect x="0" y="40" width="60" height="20" fill="#ff0000"/><text x="4" y="30" font-size="24" fill="#000000">Hg</text></svg>"##;
        let (w, h, pixels) = decode(&png(svg, 1200, 630).unwrap());
        assert_eq!((w, h), (1200, 630));
        let count = |rgb: [u8; 3]| pixels.chunks(4).filter(|p| p[..3] == rgb).count();
        assert!(count([255, 0, 0]) > 10_000, "the red bar, scaled tenfold");
        assert!(
            count([0, 0, 0]) > 1_000,
            "the text needs a font, and only the embedded one is there"
        );
        assert!(count([255, 255, 255]) > 100_000, "a white background");
    }

    #[test]
    fn an_image_an_svg_names_is_not_read() {
        let svg = r#"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10"><image width="10" height="10" xlink:href="/etc/passwd"/></svg>"#;
        let (_, _, pixels) = decode(&png(svg, 10, 10).unwrap());
        assert!(pixels.chunks(4).all(|p| p == [255, 255, 255, 255]));
        assert!(png("not svg", 10, 10).is_err());
    }
}
