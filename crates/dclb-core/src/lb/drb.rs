//! DRB, digit-reversal bouncing: per-packet round robin over the spines, one counter per destination.
//!
//! **Rule.** The source keeps a counter for each destination, starting at a random value. Each packet goes
//! through the "bouncing" switch named by the counter's digits read in reverse, then the counter advances.
//! Reversing the digits makes the first hop change on every packet. In a two-tier leaf-spine the bouncing
//! switch is a spine (and, with parallel links, a link to it), so DRB is per-packet round robin over the
//! uplinks, spine digit fastest (baselines.md §3, Cao et al., CoNEXT'13).
//!
//! **Choices.** DRB runs at the source leaf, which is equivalent to the source host tagging packets when
//! one leaf uplink leads to each spine, and needs no tag. The counter is per destination host, as in the
//! Hermes authors' ns-3 code. Candidates are ordered (link, spine), so consecutive packets change spine first
//! and link second: the digit reversal of (spine, link). Spines with parallel links down to the destination
//! leaf round-robin over them with their own per-destination counters. A failed uplink drops out of the
//! rotation. The paper pairs DRB with a receiver resequencing buffer; dclb makes that the transport's
//! `reseq_timeout_us` option (off by default so that the reordering cost is visible; turn it on to
//! reproduce the paper's setting).
//!
//! **Defaults.** None: DRB has no parameters.

use super::PacketMut;
use super::scheme::{per_switch, reflect_path_and_class, Placement, SchemeSpec};
use super::{Decision, SwitchBalancer, SwitchCx};

pub const SPEC: SchemeSpec = SchemeSpec {
    name: "drb",
    placement: Placement::Switch,
    granularity: "packet",
    summary: "digit-reversal bouncing: per-packet round robin over spines, counter per destination, random start",
    params: &[],
    install: |cx, _| {
        let hosts = cx.hosts as usize;
        let lpp = cx.facts.links_per_pair;
        per_switch(cx.switches, |_| Drb::new(hosts, lpp))
    },
    reflect: reflect_path_and_class,
};

const UNSET: u32 = u32::MAX;

pub struct Drb {
    /// Next index per destination host; `UNSET` until the first packet draws a random start.
    counters: Vec<u32>,
    links_per_pair: u32,
    /// Scratch: candidates sorted in digit-reversed order.
    order: Vec<u32>,
}

impl Drb {
    pub fn new(hosts: usize, links_per_pair: u32) -> Drb {
        Drb { counters: vec![UNSET; hosts], links_per_pair, order: Vec::new() }
    }
}

impl SwitchBalancer for Drb {
    fn hooks(&self) -> super::Hooks {
        super::Hooks::CHOOSE_ONLY
    }
    fn choose(&mut self, cx: &mut SwitchCx, pkt: &mut PacketMut, candidates: &[u32]) -> Decision {
        let n = candidates.len();
        let c = &mut self.counters[pkt.dst as usize];
        if *c == UNSET {
            *c = cx.rng.below(n) as u32;
        }
        let i = *c as usize % n;
        *c = c.wrapping_add(1) % (n as u32 * 1024);
        if self.links_per_pair == 1 {
            return Decision::Forward(candidates[i]);
        }
        // Order (link, spine): reading the uplink index's digits reversed.
        let lpp = self.links_per_pair;
        self.order.clear();
        self.order.extend_from_slice(candidates);
        let slot = |p: u32| cx.ports.slot(p);
        self.order.sort_by_key(|&p| (slot(p) % lpp, slot(p) / lpp));
        Decision::Forward(self.order[i])
    }

    fn state_bytes(&self) -> usize {
        self.counters.len() * 4
    }
}
