//! Every diagnostic code as a constant, so a misspelt code is a build error. [`Diagnostic::new`]
//! takes a [`Code`]; only this module can make one. Each code has an entry in
//! [`crate::catalogue`] (the explanation `hensuc explain` prints); a test keeps the two sets
//! equal. To add a code: add it here, to the catalogue with its `docs/diagnostics/CODE.md`, and a
//! fixture that shows it (see `CONTRIBUTING.md`).
//!
//! [`Diagnostic::new`]: crate::Diagnostic::new

use std::fmt;

/// A diagnostic code such as `E0204`: `E…` is an error, `W…` a warning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Code(&'static str);

impl Code {
    pub const fn as_str(self) -> &'static str {
        self.0
    }

    /// Whether the code names a warning (`W…`) rather than an error.
    pub fn is_warning(self) -> bool {
        self.0.starts_with('W')
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

macro_rules! codes {
    ($($code:ident,)*) => {
        $(
            #[doc = concat!("`", stringify!($code), "`: see `hensuc explain ", stringify!($code), "`.")]
            pub const $code: Code = Code(stringify!($code));
        )*
        /// Every code, in catalogue order.
        pub const ALL: &[Code] = &[$($code,)*];
    };
}

codes! {
    E0001,
    E0002,
    E0003,
    E0004,
    E0005,
    E0006,
    E0010,
    E0011,
    E0012,
    E0013,
    E0014,
    E0015,
    E0016,
    E0101,
    E0102,
    E0103,
    E0104,
    E0105,
    E0106,
    E0107,
    E0108,
    E0109,
    E0110,
    E0111,
    E0112,
    E0113,
    E0114,
    E0115,
    E0116,
    E0120,
    E0121,
    E0122,
    E0123,
    E0124,
    E0201,
    E0202,
    E0203,
    E0204,
    E0205,
    E0206,
    E0207,
    E0208,
    E0209,
    E0210,
    E0211,
    E0212,
    E0213,
    E0301,
    E0302,
    E0303,
    E0304,
    E0305,
    E0306,
    E0307,
    E0308,
    E0309,
    E0310,
    E0311,
    E0312,
    E0313,
    E0401,
    E0402,
    E0403,
    E0404,
    E0405,
    E0406,
    E0407,
    E0408,
    E0412,
    E0413,
    E0414,
    E0501,
    E0502,
    E0503,
    E0504,
    E0505,
    E0506,
    E0507,
    E0508,
    E0509,
    E0510,
    E0511,
    E0512,
    E0515,
    E0516,
    E0517,
    E0518,
    E0520,
    E0521,
    E0901,
    E0902,
    E0903,
    E0904,
    E0905,
    E0906,
    E0907,
    E0908,
    E0909,
    E0913,
    E0914,
    E0915,
    E0916,
    E0917,
    W0001,
    W0201,
    W0301,
    W0302,
    W0303,
    W0304,
    W0305,
    W0306,
    W0307,
    W0308,
    W0309,
    W0310,
    W0311,
    W0312,
    W0313,
    W0314,
    W0315,
    W0316,
    W0317,
    W0318,
    W0319,
    W0320,
    W0321,
    W0322,
    W0323,
    W0324,
    W0325,
    W0326,
    W0327,
    W0332,
    W0336,
    W0340,
    W0601,
    W0602,
    W0901,
    W0902,
    W0903,
    W0904,
    W0905,
}
