//! The trait for a whole input held in memory, apart from the readers
//! that decode it ([`crate::whole`]) so that a batch can keep records in
//! place in it ([`crate::record::InPlace`]) without the record model
//! depending on the readers.

/// A whole trace in memory (the binary maps the file).
pub trait Whole: Send + Sync {
    /// Every byte of the input.
    fn bytes(&self) -> &[u8];

    /// Called from the consuming thread, in file order, when the reader has
    /// handed out every record before byte `upto`: the owner may count
    /// progress or hash those bytes.
    fn consumed(&self, _upto: u64) {}

    /// The reader is done for good with the bytes before `upto` (called
    /// from a decoding thread, either one, `upto` never decreasing much):
    /// the owner may drop them from memory.
    fn release(&self, _upto: u64) {}

    /// The reader has looked at bytes `[start, end)` ahead of time and will
    /// not need them until it decodes them: the owner may drop them from
    /// memory for now (reading them again must still work).
    fn unneeded(&self, _start: u64, _end: u64) {}
}
