//! Cache geometry in cachegrind's `SIZE,ASSOC,LINE` syntax.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Smallest line size accepted (cachegrind's `MIN_LINE_SIZE`): with smaller
/// lines one instruction could straddle three lines.
pub const MIN_LINE: u64 = 16;

/// Size, associativity and line size of one cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Geometry {
    /// Capacity in bytes.
    pub size: u64,
    /// Ways per set.
    pub assoc: u32,
    /// Line size in bytes.
    pub line: u64,
}

/// Why a geometry is not simulable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GeometryError {
    #[error("expected SIZE,ASSOC,LINE (e.g. 32768,8,64), found {0:?}")]
    Syntax(String),
    #[error("{0}: associativity must be at least 1")]
    ZeroAssoc(Geometry),
    #[error("{0}: line size {1} is not a power of two")]
    LineNotPow2(Geometry, u64),
    #[error("{0}: line size {1} is below the minimum of {MIN_LINE}")]
    LineTooSmall(Geometry, u64),
    #[error("{0}: size is not a whole number of sets (size / (assoc × line) = {1:.3})")]
    NotWhole(Geometry, f64),
    #[error("{0}: set count {1} is not a power of two")]
    SetsNotPow2(Geometry, u64),
    #[error("{0}: associativity {1} exceeds the supported maximum of 64")]
    AssocTooLarge(Geometry, u32),
}

impl Geometry {
    /// A geometry, checked.
    pub fn new(size: u64, assoc: u32, line: u64) -> Result<Geometry, GeometryError> {
        let g = Geometry { size, assoc, line };
        g.validate()?;
        Ok(g)
    }

    /// Checks the rules cachegrind checks: power-of-two line ≥ 16 bytes,
    /// whole power-of-two number of sets.
    pub fn validate(&self) -> Result<(), GeometryError> {
        if self.assoc == 0 {
            return Err(GeometryError::ZeroAssoc(*self));
        }
        if self.assoc > 64 {
            return Err(GeometryError::AssocTooLarge(*self, self.assoc));
        }
        if !self.line.is_power_of_two() {
            return Err(GeometryError::LineNotPow2(*self, self.line));
        }
        if self.line < MIN_LINE {
            return Err(GeometryError::LineTooSmall(*self, self.line));
        }
        let way_bytes = self.assoc as u64 * self.line;
        if self.size == 0 || !self.size.is_multiple_of(way_bytes) {
            return Err(GeometryError::NotWhole(
                *self,
                self.size as f64 / way_bytes as f64,
            ));
        }
        let sets = self.size / way_bytes;
        if !sets.is_power_of_two() {
            return Err(GeometryError::SetsNotPow2(*self, sets));
        }
        Ok(())
    }

    /// Number of sets.
    pub fn sets(&self) -> u64 {
        self.size / (self.assoc as u64 * self.line)
    }

    /// log2 of the line size.
    pub fn line_bits(&self) -> u32 {
        self.line.trailing_zeros()
    }
}

impl fmt::Display for Geometry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},{}", self.size, self.assoc, self.line)
    }
}

/// Parses a byte count: plain integer, or with a `K`/`M`/`G` (binary) suffix.
pub fn parse_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.as_bytes().last()? {
        b'k' | b'K' => (&s[..s.len() - 1], 1u64 << 10),
        b'm' | b'M' => (&s[..s.len() - 1], 1 << 20),
        b'g' | b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

impl FromStr for Geometry {
    type Err = GeometryError;

    /// `SIZE,ASSOC,LINE`, e.g. `32768,8,64` or `32K,8,64`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let syntax = || GeometryError::Syntax(s.to_string());
        let parts: Vec<&str> = s.split(',').collect();
        if parts.len() != 3 {
            return Err(syntax());
        }
        let size = parse_bytes(parts[0]).ok_or_else(syntax)?;
        let assoc: u32 = parts[1].trim().parse().map_err(|_| syntax())?;
        let line = parse_bytes(parts[2]).ok_or_else(syntax)?;
        Geometry::new(size, assoc, line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_validates() {
        let g: Geometry = "32768,8,64".parse().unwrap();
        assert_eq!(g.sets(), 64);
        assert_eq!("32K,8,64".parse::<Geometry>().unwrap(), g);
        // 48 KiB 12-way: 64 sets, fine (this VM's D1).
        assert_eq!("49152,12,64".parse::<Geometry>().unwrap().sets(), 64);
        assert!(matches!(
            "24576,8,64".parse::<Geometry>(),
            Err(GeometryError::SetsNotPow2(_, 48))
        ));
        assert!(matches!(
            "32768,8,48".parse::<Geometry>(),
            Err(GeometryError::LineNotPow2(..))
        ));
        assert!(matches!(
            "32768,8,8".parse::<Geometry>(),
            Err(GeometryError::LineTooSmall(..))
        ));
        assert!(matches!(
            "1000,8,64".parse::<Geometry>(),
            Err(GeometryError::NotWhole(..))
        ));
        assert!(matches!(
            "32768,0,64".parse::<Geometry>(),
            Err(GeometryError::ZeroAssoc(..))
        ));
        assert!(matches!(
            "32768,8".parse::<Geometry>(),
            Err(GeometryError::Syntax(_))
        ));
        assert!(matches!(
            "a,8,64".parse::<Geometry>(),
            Err(GeometryError::Syntax(_))
        ));
    }
}
