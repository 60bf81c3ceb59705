//! `bind:N`: every page on node N.

use sim::{Machine, Placement};

pub struct Bind(pub u32);

impl Placement for Bind {
    fn name(&self) -> String {
        format!("bind:{}", self.0)
    }

    fn place(&mut self, _page: u64, _from: u32, _m: &Machine) -> u32 {
        self.0
    }
}
