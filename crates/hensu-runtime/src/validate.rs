//! Agent output validation (upstream `AgentOutputValidator`): ASCII control characters, Unicode
//! manipulation characters and the 4 MiB size cap.

/// The maximum size of one output in UTF-8 bytes (4 MiB).
pub const MAX_OUTPUT_BYTES: usize = 4 * 1024 * 1024;

/// Why an output was refused; `Display` is upstream's wording after `Node [<id>] output `.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum OutputViolation {
    ControlCharacters,
    UnicodeManipulation,
    TooLarge,
}

impl std::fmt::Display for OutputViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OutputViolation::ControlCharacters => "contains illegal control characters",
            OutputViolation::UnicodeManipulation => "contains Unicode manipulation characters",
            OutputViolation::TooLarge => "exceeds maximum allowed size",
        })
    }
}

/// Checks, in upstream order: `[\x00-\x08\x0B\x0C\x0E-\x1F\x7F]`, then
/// `[\u202A-\u202E\u2066-\u2069\u200B-\u200D\uFEFF]`, then the size.
pub fn validate_output(s: &str) -> Result<(), OutputViolation> {
    let b = s.as_bytes();
    let mut unicode = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            if (c <= 0x08) || c == 0x0B || c == 0x0C || (0x0E..=0x1F).contains(&c) || c == 0x7F {
                return Err(OutputViolation::ControlCharacters);
            }
        } else if !unicode && i + 2 < b.len() {
            let (c1, c2) = (b[i + 1], b[i + 2]);
            unicode = match (c, c1) {
                // U+200B–U+200D (E2 80 8B–8D), U+202A–U+202E (E2 80 AA–AE)
                (0xE2, 0x80) => matches!(c2, 0x8B..=0x8D | 0xAA..=0xAE),
                // U+2066–U+2069 (E2 81 A6–A9)
                (0xE2, 0x81) => matches!(c2, 0xA6..=0xA9),
                // U+FEFF (EF BB BF)
                (0xEF, 0xBB) => c2 == 0xBF,
                _ => false,
            };
        }
        i += 1;
    }
    if unicode {
        return Err(OutputViolation::UnicodeManipulation);
    }
    if b.len() > MAX_OUTPUT_BYTES {
        return Err(OutputViolation::TooLarge);
    }
    Ok(())
}
