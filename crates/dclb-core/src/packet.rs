//! Packets and the arena they live in.
//!
//! A packet is a plain struct in a [`PacketArena`]; events and queues carry its `u32` index. Freed slots are
//! reused, so once a run reaches its working set no packet allocates. The SACK option of an ACK lives in a
//! table beside the slots, not in the struct: only runs with SACK pay for it (in the struct, its 28 bytes made
//! every packet of every run 160 bytes instead of 128, and benchmark S1 about 6% slower).
//!
//! Besides TCP/IP fields, every packet carries a fixed-size [`LbHeader`]: the only way a switch learns anything
//! about the flow a packet belongs to, and the channel by which balancers send each other feedback
//! (CONGA's congestion metric, TR's spine queue on ACKs, a host's path tag). A switch never reads host state.
//!
//! ```text
//!  +---------------- Packet ----------------+
//!  | flow, kind, src, dst, ports, digest    |  who
//!  | seq, payload, ack, ecn, retx, priority |  transport, and the network's priority level
//!  | sent_at, echo_ts, queue_delay          |  timing
//!  | LbHeader: path, echo_path, class bits, |  what switches may read
//!  |   deadline, remaining, cwnd, fb[4], ...|  and write
//!  +----------------------------------------+
//! ```

use crate::ids::{FlowId, HostId};
use crate::transport::sack::SackOption;
use crate::units::Time;

/// What a packet is for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PacketKind {
    /// TCP data segment.
    Data,
    /// TCP acknowledgement (pure ACK, no payload).
    Ack,
    /// UDP datagram of a constant-bit-rate source.
    Udp,
    /// An edge balancer's path probe (host to host).
    Probe,
    /// The reply to a probe, sent back by the probed host.
    ProbeReply,
    /// A switch's notice to the source that it cancelled the flow (e.g. DAR's hopeless deadline flows).
    Cancel,
    /// TCP connection request (with `transport.handshake`): ACK-sized, the flow's 5-tuple.
    Syn,
    /// The receiver's answer to a SYN: ACK-sized, the flow's reversed 5-tuple, like an ACK.
    SynAck,
}

impl PacketKind {
    /// This kind as one bit of a set of kinds.
    #[inline]
    pub const fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// Path tag value meaning "no tag: switches choose".
pub const NO_PATH: u16 = u16::MAX;

/// Class bits in [`LbHeader::class`].
pub mod class {
    /// The flow is best-effort (LBT's third class).
    pub const BEST_EFFORT: u8 = 1 << 0;
    /// The flow declared a deadline (see [`super::LbHeader::deadline`]).
    pub const DEADLINE: u8 = 1 << 1;
    /// The packet was sent by a host edge balancer that wants switches to follow its path tag.
    pub const SOURCE_ROUTED: u8 = 1 << 2;
    /// The data packet carries the flow's last byte: TCP's FIN flag on the final segment (and on its
    /// retransmissions), or the last datagram of a UDP source. Set by the sending host; switches that keep
    /// per-flow state may read it to retire the flow (TAM).
    pub const FIN: u8 = 1 << 3;
}

/// The balancer header: a small fixed set of fields that hosts fill and switches may read or overwrite.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LbHeader {
    /// Path tag chosen by the source edge: the index of the source leaf's uplink to use, or [`NO_PATH`].
    pub path: u16,
    /// On an ACK or probe reply: the `path` tag of the data packet or probe it answers.
    pub echo_path: u16,
    /// Class bits, see [`class`].
    pub class: u8,
    /// A few bits a switch may overwrite and restore (e.g. TR's TTL trick); zero when sent.
    pub scratch: u16,
    /// Absolute deadline of the flow, or `Time::ZERO` for none.
    pub deadline: Time,
    /// Bytes of the flow not yet acknowledged when this packet was sent (written by the sender).
    pub remaining: u64,
    /// The sender's congestion window in bytes when this packet was sent.
    pub cwnd: u32,
    /// Total size of the flow in bytes (what an application would declare; saturates for unbounded flows).
    pub flow_size: u64,
    /// Feedback slots whose meaning each scheme defines (CONGA: LBTag, CE, FB_LBTag, FB_Metric; TR: spine queue).
    pub fb: [u32; 4],
}

impl Default for LbHeader {
    fn default() -> Self {
        LbHeader {
            path: NO_PATH,
            echo_path: NO_PATH,
            class: 0,
            scratch: 0,
            deadline: Time::ZERO,
            remaining: 0,
            cwnd: 0,
            flow_size: 0,
            fb: [0; 4],
        }
    }
}

/// ECN codepoint bits as seen by switches (ECT, CE) and the echo an ACK carries back (ECE).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Ecn {
    /// ECN-capable transport: switches may mark instead of waiting for drops.
    pub ect: bool,
    /// Congestion experienced, set by a switch.
    pub ce: bool,
    /// On an ACK: the acknowledged data packet carried CE.
    pub ece: bool,
}

/// `repr(C, align(64))`: exactly two cache lines, the fields a switch hop reads and writes (addresses, ports,
/// kind, sizes, ECN, queueing) in the first; the host's timestamps and the balancer header in the second.
#[derive(Copy, Clone, Debug)]
#[repr(C, align(64))]
pub struct Packet {
    /// The flow the packet belongs to ([`FlowId::NONE`] for probes and their replies).
    pub flow: FlowId,
    /// Source and destination hosts.
    pub src: HostId,
    pub dst: HostId,
    /// Bytes on the wire (payload plus headers): what queues and links count.
    pub wire_bytes: u32,
    /// Payload bytes.
    pub payload: u32,
    /// Transport ports; with src/dst they form the 5-tuple that ECMP hashes (protocol is implied by kind).
    pub sport: u16,
    pub dport: u16,
    pub kind: PacketKind,
    pub ecn: Ecn,
    /// Switch hops taken so far.
    pub hops: u8,
    /// Why this data packet was sent (first transmission, fast retransmit, or go-back-N after a timeout).
    pub retx: crate::transport::tcp::Retx,
    /// Strict-priority level, 0 the top (what DSCP or 802.1p carry in a real network): which of a port's
    /// priority FIFOs the packet joins (`port.rs`), clamped to the port's levels. The sending host stamps
    /// data packets from its flow's rule (`traffic.priority`); answers and control packets (ACKs, SYNs,
    /// probes, cancel notices) keep 0; a balancer may rewrite it ([`crate::lb::PacketMut::set_priority`]).
    /// It sits in the two bytes of padding before `seq`, so the packet stays 128 bytes, and in the line a
    /// switch hop reads.
    pub priority: u8,
    /// First payload byte (data) or the cumulative ACK number (ACK).
    pub seq: u64,
    /// Digest of the 5-tuple ([`crate::hash::digest`] of [`Packet::five_tuple`]), set when the
    /// simulation makes the packet (`0`: not set, as in a packet a test builds; [`Packet::tuple_digest`]
    /// then computes it). ECMP-style choices hash it with their salt at the switch, so the hop does one
    /// mix instead of three on the way to its port (S1: about 1% of the loop's time).
    pub tuple: u64,
    /// Total time spent waiting in queues so far (serialisation excluded).
    pub queue_delay: Time,
    /// When the packet left its host: the start of its serialisation on the host's NIC (a TCP timestamp,
    /// and what edge balancers measure delays from). An answer (ACK, probe reply, SYN-ACK) and a packet
    /// made by a switch (a cancel notice) carry the time they were made instead.
    pub sent_at: Time,
    /// On an ACK or a probe reply: `sent_at` of the data packet or probe that triggered it (timestamp echo).
    pub echo_ts: Time,
    pub lb: LbHeader,
}

const _: () = assert!(std::mem::size_of::<Packet>() == 128, "a packet is two cache lines");
const _: () = assert!(std::mem::offset_of!(Packet, priority) < 64, "the priority is read with the first line");

impl Packet {
    pub fn new(kind: PacketKind, flow: FlowId, src: HostId, dst: HostId) -> Packet {
        Packet {
            flow,
            kind,
            src,
            dst,
            sport: 0,
            dport: 0,
            seq: 0,
            payload: 0,
            wire_bytes: 0,
            ecn: Ecn::default(),
            retx: crate::transport::tcp::Retx::No,
            priority: 0,
            sent_at: Time::ZERO,
            echo_ts: Time::ZERO,
            tuple: 0,
            queue_delay: Time::ZERO,
            hops: 0,
            lb: LbHeader::default(),
        }
    }

    /// The digest of the 5-tuple: the one recorded when the packet was made, or computed now.
    #[inline]
    pub fn tuple_digest(&self) -> u64 {
        let computed = || crate::hash::digest(self.five_tuple());
        if self.tuple != 0 {
            debug_assert_eq!(self.tuple, computed(), "a 5-tuple changed after the packet was made");
            self.tuple
        } else {
            computed()
        }
    }

    /// Records the digest of the 5-tuple, once its fields are final (the simulation does, making the packet).
    #[inline]
    pub fn record_tuple(&mut self) {
        self.tuple = crate::hash::digest(self.five_tuple());
    }

    /// The exact 5-tuple packed without overlap (32-bit hosts, 16-bit ports, protocol): a key for flow
    /// tables. ACKs of a flow give the reversed tuple, as in real TCP.
    pub fn five_tuple(&self) -> u128 {
        let proto: u128 = match self.kind {
            PacketKind::Udp => 17,
            _ => 6,
        };
        (self.src.0 as u128) << 72 | (self.dst.0 as u128) << 40 | (self.sport as u128) << 24 | (self.dport as u128) << 8 | proto
    }
}

/// Slab of packets with a free list, and the run's wire-byte books: every byte made ([`PacketArena::make`])
/// is delivered ([`PacketArena::deliver`]), dropped ([`PacketArena::discard`]) or still alive.
#[derive(Default)]
pub struct PacketArena {
    slots: Vec<Packet>,
    /// SACK options of ACKs by slot; empty until the first one is attached.
    sack: Vec<SackOption>,
    free: Vec<u32>,
    live: usize,
    peak_live: usize,
    /// Wire bytes of the packets made, delivered to a host, and dropped (anywhere).
    created: u64,
    delivered: u64,
    dropped: u64,
    /// Whether dropped UDP packets are noted in `udp_lost` (only in a run with UDP flows, so that a TCP run
    /// never reads a dropped packet's slot).
    track_udp: bool,
    /// The UDP packets dropped since the loop last took them ([`PacketArena::take_udp_losses`]): the flow
    /// and the payload bytes lost. A UDP receiver hears nothing of a loss, so the host stack learns of it
    /// here to end the flow once every packet it sent is delivered or lost.
    udp_lost: Vec<(FlowId, u32)>,
}

impl PacketArena {
    pub fn new() -> PacketArena {
        PacketArena {
            slots: Vec::with_capacity(4096),
            sack: Vec::new(),
            free: Vec::with_capacity(4096),
            live: 0,
            peak_live: 0,
            created: 0,
            delivered: 0,
            dropped: 0,
            track_udp: false,
            udp_lost: Vec::new(),
        }
    }

    /// Notes every UDP packet dropped from now on, for [`PacketArena::take_udp_losses`].
    pub fn track_udp_losses(&mut self) {
        self.track_udp = true;
    }

    /// Whether UDP packets were dropped since the losses were last taken.
    #[inline(always)]
    pub fn has_udp_losses(&self) -> bool {
        !self.udp_lost.is_empty()
    }

    /// Takes the UDP packets dropped since the last call (flow, payload bytes), oldest first.
    pub fn take_udp_losses(&mut self) -> std::vec::Drain<'_, (FlowId, u32)> {
        self.udp_lost.drain(..)
    }

    /// Puts a packet the simulation made (a host or a switch) in the arena: its bytes are counted as
    /// created and the digest of its 5-tuple recorded ([`Packet::record_tuple`]).
    #[inline]
    pub fn make(&mut self, mut p: Packet) -> u32 {
        self.created += p.wire_bytes as u64;
        p.record_tuple();
        self.alloc(p)
    }

    /// Frees packet `id`, which reached its host: its bytes are counted as delivered.
    #[inline]
    pub fn deliver(&mut self, id: u32) {
        self.delivered += self.slots[id as usize].wire_bytes as u64;
        self.free(id);
    }

    /// Frees packet `id` of `wire` bytes, which the network dropped (refused, lost on the wire, no route,
    /// a balancer's decision): its bytes are counted as dropped. `wire` is given so that a port that knows
    /// it need not read the packet.
    #[inline]
    pub fn discard(&mut self, id: u32, wire: u32) {
        self.dropped += wire as u64;
        if self.track_udp {
            self.note_udp_loss(id);
        }
        self.free(id);
    }

    #[cold]
    fn note_udp_loss(&mut self, id: u32) {
        let p = &self.slots[id as usize];
        if p.kind == PacketKind::Udp {
            self.udp_lost.push((p.flow, p.payload));
        }
    }

    /// Wire bytes made, delivered and dropped so far.
    pub fn wire_books(&self) -> (u64, u64, u64) {
        (self.created, self.delivered, self.dropped)
    }

    pub fn alloc(&mut self, p: Packet) -> u32 {
        self.live += 1;
        self.peak_live = self.peak_live.max(self.live);
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            if let Some(o) = self.sack.get_mut(i as usize) {
                // A reused slot starts without the option of the ACK it held before.
                *o = SackOption::default();
            }
            i
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as u32
        }
    }

    pub fn free(&mut self, id: u32) {
        self.live -= 1;
        self.free.push(id);
    }

    #[inline]
    pub fn get(&self, id: u32) -> &Packet {
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: u32) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Asks the CPU to bring packet `id`'s first cache line (what a switch hop reads) into cache ahead of
    /// use; a hint only, and nothing for an id out of range.
    #[inline(always)]
    pub fn prefetch(&self, id: u32) {
        if let Some(p) = self.slots.get(id as usize) {
            crate::prefetch::prefetch(p);
        }
    }

    /// Attaches a SACK option to the ACK in slot `id`.
    pub fn set_sack(&mut self, id: u32, opt: SackOption) {
        if self.sack.len() <= id as usize {
            self.sack.resize(self.slots.len(), SackOption::default());
        }
        self.sack[id as usize] = opt;
    }

    /// The SACK option of the ACK in slot `id` (empty if it has none).
    pub fn sack(&self, id: u32) -> SackOption {
        self.sack.get(id as usize).copied().unwrap_or_default()
    }

    /// Packets currently alive (queued, in flight on a link, or held by a receiver buffer).
    pub fn live(&self) -> usize {
        self.live
    }

    pub fn peak_live(&self) -> usize {
        self.peak_live
    }

    /// Wire bytes of every live packet, counted slot by slot (independent of any running counter, so byte
    /// conservation checks compare two separate bookkeepings).
    pub fn live_bytes(&self) -> u64 {
        let mut free = vec![false; self.slots.len()];
        for &i in &self.free {
            free[i as usize] = true;
        }
        self.slots.iter().zip(free).filter(|(_, f)| !f).map(|(p, _)| p.wire_bytes as u64).sum()
    }

    /// Bytes the arena holds (capacity of the slab).
    pub fn footprint_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Packet>() + self.sack.capacity() * std::mem::size_of::<SackOption>() + self.free.capacity() * 4
    }
}
