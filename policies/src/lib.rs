//! policies
