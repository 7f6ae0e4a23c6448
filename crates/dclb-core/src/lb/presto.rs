//! Presto: the sending host cuts each flow into flowcells of at most 64 KB and sends consecutive flowcells
//! round robin over the paths.
//!
//! **Rule.** Presto runs in the sender's virtual switch (He et al., SIGCOMM'15; baselines.md §4). For every
//! flow it keeps a byte count of the current flowcell and the path that cell uses. A segment that would push
//! the cell past the flowcell size opens a new cell: the count restarts with that segment and the flow moves
//! to the next path in its rotation. Every other segment joins the current cell and follows its path. A cell
//! therefore never changes path, and path changes happen only between cells. Switches just forward by the
//! label the host wrote (shadow MACs in the paper; here the path tag, read by [`SourceRoute`]). In a
//! leaf-spine with one link per leaf-spine pair a path is a spine; with parallel links it is an uplink.
//!
//! **Choices.**
//! * *Cell size.* A flowcell holds whole segments and at most `flowcell_bytes` of payload, so with
//!   dclb's 1460-byte MSS a 64,000-byte cell is 43 segments (62,780 bytes); with an MSS that divides the cell
//!   size, cells are exactly `flowcell_bytes` long. "64 KB" is taken as 64,000 bytes, dclb's decimal KB
//!   (the paper's bound is the largest TSO segment, 64 KiB; set 65,536 to follow that reading). Payload
//!   bytes are counted, not wire bytes, as baselines.md recommends.
//! * *Counter scope.* The rotation is kept per flow (the paper's per-flow flowcell state; the Hermes authors'
//!   ns-3 code does the same), starting at a uniformly random path for each flow (`random_start`), so short
//!   flows, which fit in one cell, spread like ECMP. The rotation follows the order of the path list the
//!   fabric gives (ascending uplink index).
//! * *Retransmissions.* Presto's vswitch sees segments, not sequence numbers: a retransmitted segment is
//!   counted into the current cell and takes that cell's path, like any other segment. It is not sent back
//!   on the path its bytes first took.
//! * *Failures.* Only working paths are offered; if the current cell's path is no longer among them, the
//!   cell continues on the path its rotation counter now names. The paper's controller-pushed weights for
//!   asymmetric fabrics (weighted round robin) are not modelled: plain round robin, as in the paper's
//!   symmetric setting.
//! * *ACKs* are not tagged and follow ECMP in the fabric, as in the Hermes authors' code.
//! * *Receiver.* The paper's modified GRO holds data across flowcell-boundary gaps. dclb models it with the
//!   transport's resequencing buffer, `transport.reseq_timeout_us`, which is off by default so that the
//!   reordering cost stays visible. A reproduction of Presto's own setting should turn it on: baselines.md
//!   §0.4c recommends sweeping 50, 100 and 500 µs; the Hermes authors' driver uses 100 µs for out-of-order
//!   data (their README says 500 µs). `benchmarks/compare_schemes.py` compares Presto with it (100 µs)
//!   unless asked for `presto+noreseq`. Of the papers dclb reproduces, TR and TAM state the 64 KB cell but not
//!   the receiver, and MDTLB's Table 5 states neither (it leaves `enableLargeDupAck` off).
//! * State is dropped when the last byte of a flow is acknowledged (TCP) or sent (UDP).
//!
//! **Defaults.**
//! * `flowcell_bytes` = 64,000: the paper's 64 KB flowcell (baselines.md §4; TR and TAM also use 64 KB).
//!   The Hermes authors' ns-3 code uses 10 packets of 1400 B = 14,000 bytes (`PRESTO_RATIO`); set that to
//!   reproduce runs made with it.
//! * `random_start` = true: baselines.md §4 and the Hermes authors' code start each flow at a random path.

use super::flowhash::FlowMap;
use super::params::scheme_params;
use super::scheme::{reflect_path_and_class, Placement, SchemeSpec};
use super::{EdgeBalancer, EdgeCx, FlowView, Installed, PacketMut};
use crate::packet::{Packet, PacketKind, NO_PATH};

pub const SPEC: SchemeSpec = SchemeSpec {
    name: "presto",
    placement: Placement::Edge,
    granularity: "flowcell",
    summary: "sender cuts each flow into flowcells of at most 64 KB and sends them round robin over the paths",
    params: PrestoParams::SPECS,
    install: |cx, p| {
        let p = PrestoParams::from_params(p);
        Installed::Edges((0..cx.hosts).map(|_| Box::new(Presto::new(p.flowcell_bytes, p.random_start)) as Box<dyn EdgeBalancer>).collect())
    },
    reflect: reflect_path_and_class,
};

scheme_params! {
    /// Presto's parameters.
    pub struct PrestoParams {
        /// largest flowcell, in payload bytes; a cell holds whole segments up to this size
        #[source = "Presto paper 64 KB (baselines.md §4), read as 64,000 B; the Hermes authors' ns-3 code uses 14,000 B"]
        flowcell_bytes: u64 (bytes) in 1..=1_000_000_000_000 = 64_000,
        /// start each flow's round robin at a uniformly random path (false: at the first path)
        #[source = "baselines.md §4; Hermes authors' ns-3 code (random initial index per flow)"]
        random_start: bool = true,
    }
}

/// Flowcell state of one flow.
#[derive(Copy, Clone, Debug)]
struct Cell {
    /// Payload bytes in the current flowcell.
    bytes: u64,
    /// Round-robin position: the current cell uses `paths[rr % paths.len()]`.
    rr: u32,
    /// Path tag of the current cell, `NO_PATH` before the first segment.
    tag: u16,
    /// Flowcells opened so far (the id the paper writes into each packet).
    cells: u32,
}

/// The Presto sender of one host.
pub struct Presto {
    cell_bytes: u64,
    random_start: bool,
    /// Per-flow state, by flow id.
    flows: FlowMap<Cell>,
    /// Flowcells opened by all flows of this host (run summary).
    cells_opened: u64,
}

impl Presto {
    pub fn new(cell_bytes: u64, random_start: bool) -> Presto {
        Presto { cell_bytes, random_start, flows: FlowMap::default(), cells_opened: 0 }
    }

    /// Flowcells opened so far by `flow` (0 if the flow has no state).
    pub fn cells_of(&self, flow: u32) -> u32 {
        self.flows.get(&(flow as u128)).map_or(0, |c| c.cells)
    }
}

impl EdgeBalancer for Presto {
    fn choose_path(&mut self, cx: &mut EdgeCx, flow: &FlowView, pkt: &mut PacketMut, paths: &[u16]) -> u16 {
        let n = paths.len();
        let len = pkt.payload as u64;
        let random_start = self.random_start;
        let c = self.flows.entry(flow.flow as u128).or_insert_with(|| Cell { bytes: 0, rr: if random_start { cx.rng.below(n) as u32 } else { 0 }, tag: NO_PATH, cells: 0 });
        if c.tag == NO_PATH {
            // First segment of the flow opens its first cell.
            c.cells = 1;
            self.cells_opened += 1;
            c.bytes = len;
            c.tag = paths[c.rr as usize % n];
        } else if c.bytes + len > self.cell_bytes {
            // This segment does not fit: it opens the next cell on the next path.
            c.rr += 1;
            c.cells += 1;
            self.cells_opened += 1;
            c.bytes = len;
            c.tag = paths[c.rr as usize % n];
        } else {
            c.bytes += len;
            if !paths.contains(&c.tag) {
                c.tag = paths[c.rr as usize % n];
            }
        }
        let tag = c.tag;
        if pkt.kind == PacketKind::Udp && pkt.seq + len >= flow.size {
            self.flows.remove(&(flow.flow as u128));
        }
        tag
    }

    fn on_ack(&mut self, _cx: &mut EdgeCx, flow: &FlowView, _ack: &Packet) {
        if flow.acked >= flow.size {
            self.flows.remove(&(flow.flow as u128));
        }
    }

    fn state_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.flows.len() * (std::mem::size_of::<u128>() + std::mem::size_of::<Cell>())
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("presto_flowcells", self.cells_opened)]
    }
}
