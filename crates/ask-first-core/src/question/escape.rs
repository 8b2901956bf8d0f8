//! Which characters a frame shows as a visible `<U+XXXX>` escape: whatever could make a name
//! read as something else (line breaks, invisible and bidirectional characters, quote marks,
//! the frame's and the separator's look-alikes).

/// Whether `c` is shown as a `<U+XXXX>` escape inside a frame.
pub(super) fn escaped(c: char) -> bool {
    c.is_control()
        || (c.is_whitespace() && c != ' ')
        || invisible(u32::from(c))
        || quote_or_bracket(c)
        || slash_look_alike(c)
}

/// Format characters (bidirectional controls, zero-width characters, invisible operators,
/// tags), invisible fillers, variation selectors, private-use characters (a font may draw
/// anything there) and non-characters.
pub(super) fn invisible(code: u32) -> bool {
    matches!(
        code,
        0x00AD
            | 0x034F
            | 0x0600..=0x0605
            | 0x061C
            | 0x06DD
            | 0x070F
            | 0x0890..=0x0891
            | 0x08E2
            | 0x115F..=0x1160
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x206F
            | 0x2800
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF
            | 0xFFA0
            | 0xFFF0..=0xFFFF
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF
            | 0xE000..=0xF8FF
            | 0xF0000..=0x10FFFF
    ) || (code & 0xFFFE) == 0xFFFE
        || (0xFDD0..=0xFDEF).contains(&code)
}

/// Quote marks of every style, the frame `«` `»` and everything drawn like it (angle brackets
/// and guillemets of every script and width, `≪` `≫`, `《` `》`, `〈` `〉`), and `<`, the
/// opening of an escape: a name can spell neither a frame nor an escape.
fn quote_or_bracket(c: char) -> bool {
    matches!(
        c,
        '"' | '\''
            | '`'
            | '<'
            | '>'
            | '«'
            | '»'
            | '‹'
            | '›'
            | '“'
            | '”'
            | '„'
            | '‟'
            | '‘'
            | '’'
            | '‚'
            | '‛'
            | '「'
            | '」'
            | '『'
            | '』'
            | '〝'
            | '〞'
            | '〟'
            | '＂'
            | '＇'
            | '｢'
            | '｣'
            | '❛'
            | '❜'
            | '❝'
            | '❞'
            | '❟'
            | '❠'
            | '⹂'
            | '🙶'
            | '🙷'
            | '🙸'
            // Angle brackets and guillemet look-alikes.
            | '˂'
            | '˃'
            | '˱'
            | '˲'
            | 'ᐸ'
            | 'ᐳ'
            | 'ᚲ'
            | '≪'
            | '≫'
            | '⋘'
            | '⋙'
            | '⪡'
            | '⪢'
            | '〈'
            | '〉'
            | '❬'
            | '❭'
            | '❮'
            | '❯'
            | '❰'
            | '❱'
            | '⟨'
            | '⟩'
            | '⟪'
            | '⟫'
            | '⦑'
            | '⦒'
            | '⧼'
            | '⧽'
            | '\u{2329}' // left-pointing angle bracket
            | '\u{232A}' // right-pointing angle bracket
            | '《'
            | '》'
            | '︽'
            | '︾'
            | '︿'
            | '﹀'
            | '﹤'
            | '﹥'
            | '＜'
            | '＞'
            // Substitution and transposition brackets, drawn as quote marks.
            | '\u{2E02}'..='\u{2E05}'
            | '\u{2E09}'..='\u{2E0A}'
            | '\u{2E0C}'..='\u{2E0D}'
            | '\u{2E1C}'..='\u{2E1D}'
            | '\u{2E20}'..='\u{2E21}'
    )
}

/// Everything drawn like the path separator `/` (or its mirror) but `/` itself: inside a frame
/// a `/` is shown as it is (`«a/b»` is one component), so only the real one separates frames.
/// Letters of other scripts that look like a slash (the katakana `ノ`) are letters and shown.
fn slash_look_alike(c: char) -> bool {
    matches!(
        c,
        '\u{0337}' // combining short solidus overlay
            | '\u{0338}' // combining long solidus overlay
            | '\u{20EB}' // combining long double solidus overlay
            | '᜵'
            | '⁄' // fraction slash
            | '∕' // division slash
            | '∖' // set minus
            | '╱'
            | '╲'
            | '⟋'
            | '⟍'
            | '⧵'
            | '⧶'
            | '⧷'
            | '⧸' // big solidus
            | '⧹' // big reverse solidus
            | '⼃'
            | '〳'
            | '㇓'
            | '﹨'
            | '／' // fullwidth solidus
            | '＼'
            | '𝈺'
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::question::{Fact, Name, PathName};

    fn name(text: &str) -> String {
        Fact::name(Name::new(text)).to_string()
    }

    #[test]
    fn every_kind_of_line_break_is_escaped() {
        assert_eq!(
            name("a\nb\rc\u{2028}d\u{2029}e\u{85}f\u{b}g\u{c}h\ti"),
            "caller-supplied name «a<U+000A>b<U+000D>c<U+2028>d<U+2029>e<U+0085>f<U+000B>g<U+000C>h<U+0009>i»"
        );
    }

    #[test]
    fn bidirectional_controls_are_escaped() {
        assert_eq!(
            name("invoice\u{202E}fdp.exe"),
            "caller-supplied name «invoice<U+202E>fdp.exe»"
        );
        assert_eq!(
            name(
                "\u{202A}\u{202B}\u{202C}\u{202D}\u{2066}\u{2067}\u{2068}\u{2069}\u{200E}\u{200F}\u{61C}"
            ),
            "caller-supplied name «<U+202A><U+202B><U+202C><U+202D><U+2066><U+2067><U+2068><U+2069><U+200E><U+200F><U+061C>»"
        );
    }

    #[test]
    fn zero_width_and_invisible_characters_are_escaped() {
        assert_eq!(
            name("Ap\u{200B}prove\u{200C}th\u{200D}is\u{2060}\u{FEFF}\u{AD}"),
            "caller-supplied name «Ap<U+200B>prove<U+200C>th<U+200D>is<U+2060><U+FEFF><U+00AD>»"
        );
        assert_eq!(
            name("tag\u{E0041}\u{FE0F}\u{3000}\u{A0}x"),
            "caller-supplied name «tag<U+E0041><U+FE0F><U+3000><U+00A0>x»"
        );
    }

    #[test]
    fn quotes_frames_and_escape_openings_are_escaped() {
        assert_eq!(
            name("\"'`«»‹›“”‘’„「」<>"),
            "caller-supplied name «<U+0022><U+0027><U+0060><U+00AB><U+00BB><U+2039><U+203A><U+201C><U+201D><U+2018><U+2019><U+201E><U+300C><U+300D><U+003C><U+003E>»"
        );
        // A name spelling an escape does not look like the character it names.
        assert_eq!(
            name("<U+202E>"),
            "caller-supplied name «<U+003C>U+202E<U+003E>»"
        );
        assert_ne!(name("<U+202E>"), name("\u{202E}"));
    }

    #[test]
    fn look_alikes_of_the_frame_and_separator_are_escaped() {
        // U+2215 DIVISION SLASH between fullwidth-style double angle brackets: one component,
        // and it cannot read as the two-component path «reports»/«Q3.txt».
        let forged = Fact::path(PathName::new(["reports》∕《Q3.txt"])).to_string();
        assert_eq!(
            forged,
            "caller-supplied path «reports<U+300B><U+2215><U+300A>Q3.txt»"
        );
        let real = Fact::path(PathName::new(["reports", "Q3.txt"])).to_string();
        assert_eq!(real, "caller-supplied path «reports»/«Q3.txt»");
        assert_ne!(forged, real);
        assert_eq!(name("a»/«b"), "caller-supplied name «a<U+00BB>/<U+00AB>b»");
        // Every slash look-alike, and every frame look-alike, is escaped; `/` itself is not.
        for slash in [
            '∕', '⧸', '⁄', '／', '⟋', '╱', '\u{0338}', '\u{0337}', '᜵', '〳', '𝈺',
        ] {
            let shown = name(&format!("a{slash}b"));
            assert_eq!(
                shown,
                format!("caller-supplied name «a<U+{:04X}>b»", u32::from(slash))
            );
        }
        for bracket in [
            '«', '»', '‹', '›', '《', '》', '〈', '〉', '\u{2329}', '\u{232A}', '⟨', '⟩', '⟪', '⟫',
            '≪', '≫', '⋘', '⋙', '❮', '❯', '＜', '＞', '﹤', '﹥', '<', '>', '˂', '˃', '｢', '｣',
        ] {
            let shown = name(&format!("a{bracket}b"));
            assert_eq!(
                shown,
                format!("caller-supplied name «a<U+{:04X}>b»", u32::from(bracket))
            );
        }
        assert_eq!(name("a/b"), "caller-supplied name «a/b»");
        // Letters that merely resemble a slash are letters: shown as they are.
        assert_eq!(name("ノート"), "caller-supplied name «ノート»");
    }

    #[test]
    fn no_hidden_or_breaking_character_survives_rendering() {
        let nasty: String = (0u32..=0x3000)
            .chain(0xE0000..=0xE0080)
            .chain(0xFE00..=0xFFFF)
            .filter_map(char::from_u32)
            .collect();
        for chunk in nasty.chars().collect::<Vec<_>>().chunks(64) {
            let text: String = chunk.iter().collect();
            let shown = name(&text);
            let inner = &shown["caller-supplied name «".len()..shown.len() - "»".len()];
            // Every `<` opens an escape `<U+XXXX>`: what lies outside them is shown as it is.
            let mut rest = inner;
            while let Some(at) = rest.find(|c: char| escaped(c)) {
                let (before, from) = rest.split_at(at);
                assert!(
                    from.starts_with("<U+"),
                    "{:?} survived in {shown:?} after {before:?}",
                    from.chars().next()
                );
                let end = from.find('>').expect("an escape is closed");
                assert!(from[3..end].chars().all(|c| c.is_ascii_hexdigit()));
                rest = &from[end + 1..];
            }
        }
    }
}
