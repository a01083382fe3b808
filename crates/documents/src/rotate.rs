//! Turning a PDF's pages: each page's `/Rotate` (its own or inherited) set further by 90,
//! 180 or 270 degrees, so the page content is untouched and its text reads the same.

use lopdf::{Dictionary, Object, ObjectId};

/// How far up the page tree an inherited `/Rotate` is looked for.
const MAX_TREE_DEPTH: usize = 32;

/// `bytes` with every page turned `degrees` further clockwise, and the number of pages.
pub fn rotate_pdf(bytes: &[u8], degrees: u16) -> Result<(Vec<u8>, usize), String> {
    let mut pdf =
        lopdf::Document::load_mem(bytes).map_err(|e| format!("not a readable PDF: {e}"))?;
    if pdf.is_encrypted() {
        return Err("the PDF is encrypted".to_owned());
    }
    let pages: Vec<ObjectId> = pdf.get_pages().into_values().collect();
    if pages.is_empty() {
        return Err("the PDF has no pages".to_owned());
    }
    for page in &pages {
        let current = inherited_rotation(&pdf, *page);
        let turned = (current + i64::from(degrees)).rem_euclid(360);
        pdf.get_dictionary_mut(*page)
            .map_err(|e| format!("a page cannot be changed: {e}"))?
            .set("Rotate", Object::Integer(turned));
    }
    let mut out = Vec::with_capacity(bytes.len());
    pdf.save_to(&mut out)
        .map_err(|e| format!("cannot write the PDF: {e}"))?;
    Ok((out, pages.len()))
}

/// A page's `/Rotate`, its own or its nearest ancestor's (0 when none says).
pub fn inherited_rotation(pdf: &lopdf::Document, page: ObjectId) -> i64 {
    let mut node: Option<&Dictionary> = pdf.get_dictionary(page).ok();
    for _ in 0..MAX_TREE_DEPTH {
        let Some(dict) = node else { break };
        if let Ok(rotate) = dict.get(b"Rotate").and_then(Object::as_i64) {
            // Only multiples of 90 are valid; anything else counts as none.
            return if rotate % 90 == 0 {
                rotate.rem_euclid(360)
            } else {
                0
            };
        }
        node = dict
            .get(b"Parent")
            .and_then(Object::as_reference)
            .and_then(|parent| pdf.get_dictionary(parent))
            .ok();
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn something_that_is_not_a_pdf_is_not_rotated() {
        assert!(rotate_pdf(b"hello", 90).is_err());
    }
}
