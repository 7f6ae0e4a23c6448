//! A port: one direction of a link, and the queue discipline that runs on it.
//!
//! ```text
//!   packet ──► admit: link up? room in the buffer? ──no──► dropped (counted here)
//!                 │ yes: DCTCP mark if queue ≥ K (instantaneous, this packet's arrival)
//!                 ▼
//!            [ control FIFO      ] ─┐ strict priority: the first FIFO that holds a packet
//!            [ data, level 0     ] ─┤ is served when the serialiser is free
//!            [ data, level 1 ... ] ─┴─start_service──► serialiser (wire bytes at the port rate)
//!                                                      │ finish_service: counters, next head
//!                                                      ▼ propagation delay ──► peer node
//! ```
//!
//! The port owns its live state (queue, busy flag) and its statistics (bytes, drops, marks, peak and
//! time-averaged queue). It knows nothing of events or balancers: the simulation asks it to admit a packet,
//! to start serving its head, and to finish serving it, and schedules the events those answers imply.
//!
//! The buffer limit and the marking threshold each count packets or bytes ([`Buffer`], [`Threshold`]):
//! switch ports count bytes by default, as a shared-memory switch counts buffer cells, so a 40 B ACK takes
//! 40 B, not a full-size slot; host NICs admit by descriptors (packets). Both compare the queue with the
//! packet in service included.
//!
//! **Strict-priority FIFOs.** A port holds one FIFO per class it serves, and when the serialiser is free
//! it starts the head of the first FIFO that holds a packet (strict priority, no preemption: a packet on
//! the wire finishes). The classes, in the order served:
//!
//! * a *control class* of packet kinds ([`Port::set_control_kinds`]), if the port has one: host NICs use
//!   it so that probes, and ACKs if asked (`transport.host_ack_priority`), do not wait behind the host's
//!   data;
//! * one FIFO per *priority level* ([`Port::set_priority_levels`], `topology.priority_queues`; one by
//!   default): a packet joins the level in its header ([`Packet::priority`], 0 the top), clamped to the
//!   port's lowest level.
//!
//! Every FIFO shares the port's buffer: drop-tail admission and DCTCP's K compare the port's *total*
//! queue (every class, the packet in service included), as a shared-memory switch with per-port marking
//! does; a packet of any level may be refused by a buffer that lower levels filled, and is marked when
//! the total reaches K (so a top-level packet arriving at a port full of low-level data is marked, telling
//! its sender about a queue it does not wait in; per-queue marking would spare it, but then the port's
//! total, which is what overflows, would go unsignalled). A balancer reads the total
//! ([`Port::queue_bytes_at`]) and each level's share ([`Port::level_bytes_at`]).
//!
//! **Lazily drained ports** ([`Port::set_lazy`]). A single FIFO knows when a packet will leave the moment it
//! is admitted: `max(now, when the packet ahead leaves) + serialisation`. Such a port records each admitted
//! packet's departure ([`Departure`]) and the simulation schedules the arrival at the next hop at once, so a
//! packet costs one event per hop instead of two (no transmission-done event). Departed packets are removed
//! (counted; the wire's losses get an event of their own) whenever the port is next touched
//! ([`Port::pop_departed`], before every admission and every sample), and every read of the queue
//! ([`Port::queue_bytes_at`] and its siblings) leaves out the packets departed by the reader's time, so
//! admission, ECN marking, balancers and the sampler see exactly the queue the event-driven port shows then.
//! A packet leaving at exactly the reader's time has left: departures run before everything else at their
//! time (see `sched.rs`). Ports with more than one FIFO (a control class, or several priority levels), and
//! the ports of a switch whose balancer watches departures (`on_departure`), stay event-driven: with
//! strict priority a packet admitted later may overtake one already queued, so a departure is not known
//! at admission; a departure hook must run at its own time.
//!
//! **Rate estimators** ([`Port::estimate_rate`], `dre.rs`). A port may keep a discounting rate estimator for
//! its switch's balancer (CONGA's DRE), asked for when the balancer is installed. It counts each packet at
//! admission with the departure a FIFO port knows then, on lazy and event-driven ports alike, so reading it
//! needs no departure event and no balancer hook.

use crate::config::QueueUnit;
use crate::dre::{Dre, DreConfig, RateEstimator};
use crate::packet::{Packet, PacketArena};
use crate::ids::{NodeId, PortId};
use crate::rng::Rng;
use crate::units::{Bytes, Rate, Time};
use std::collections::VecDeque;

/// What a port connects.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PortRole {
    /// Host NIC towards its leaf.
    HostUp,
    /// Leaf towards one of its hosts.
    LeafDown,
    /// Leaf towards a spine.
    LeafUp,
    /// Spine towards a leaf.
    SpineDown,
}

impl PortRole {
    pub fn name(self) -> &'static str {
        match self {
            PortRole::HostUp => "host_up",
            PortRole::LeafDown => "leaf_down",
            PortRole::LeafUp => "leaf_up",
            PortRole::SpineDown => "spine_down",
        }
    }
}

/// Where a port sits in the fabric and what its link is like.
#[derive(Copy, Clone, Debug)]
pub struct PortLink {
    /// Node that transmits on this port.
    pub owner: NodeId,
    /// Node at the other end.
    pub peer: NodeId,
    pub role: PortRole,
    /// Leaf uplink index (`spine * links + link`) for `LeafUp`, leaf down-link index for `SpineDown`
    /// (`leaf * links + link`), host index for `LeafDown`, 0 for a NIC.
    pub slot: u32,
    pub rate: Rate,
    /// One-way propagation delay to `peer`.
    pub delay: Time,
}

/// A fault on the wire that routing does not know about: packets are serialised as usual and then lost
/// (a failed link that routing converged around is `Port::up == false` instead).
#[derive(Clone, Debug)]
pub enum WireFault {
    None,
    /// Every packet is lost.
    Blackhole,
    /// Each packet is lost with probability `rate`, drawn from the port's own stream.
    Lossy { rate: f64, rng: Rng },
}

/// A drop-tail buffer limit: packets or bytes (the other is unlimited, `MAX`).
#[derive(Copy, Clone, Debug)]
pub struct Buffer {
    pub packets: u32,
    pub bytes: u64,
}

/// An ECN marking threshold: mark when the queue holds at least `k` of `unit` on arrival; `k = 0` never marks.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Threshold {
    pub unit: QueueUnit,
    pub k: u64,
}

impl Threshold {
    pub const OFF: Threshold = Threshold { unit: QueueUnit::Packets, k: 0 };
}

/// A packet in a lazily drained port's queue: when it leaves (its serialisation ends), its wire bytes and
/// arena id, and whether the wire loses it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Departure {
    pub at: Time,
    /// Wire bytes, with the wire's loss verdict in the top bit.
    wire_lost: u32,
    pub pid: u32,
}

impl Departure {
    const LOST: u32 = 1 << 31;
    #[inline(always)]
    fn new(at: Time, wire: u32, pid: u32, lost: bool) -> Departure {
        debug_assert!(wire < Self::LOST, "a packet of 2 GB");
        Departure { at, wire_lost: wire | if lost { Self::LOST } else { 0 }, pid }
    }
    #[inline]
    pub fn wire(&self) -> u32 {
        self.wire_lost & !Self::LOST
    }
    /// Whether the wire loses the packet.
    #[inline]
    pub fn lost(&self) -> bool {
        self.wire_lost & Self::LOST != 0
    }
    /// Whether the packet has left by `now` (departures run first at their time).
    #[inline]
    pub fn left_by(&self, now: Time) -> bool {
        self.at <= now
    }
}

/// A lazy port's departures, oldest first: the oldest kept inline (the one popping reads; in the port's hot
/// lines, so a port whose queue holds at most one packet never reads memory of its own) and the rest in a
/// ring buffer whose capacity is a power of two (a mask instead of a wrap test; growth checked on push only).
#[derive(Clone, Debug, Default)]
struct Ring {
    /// The oldest departure while `len > 0`.
    front: Departure,
    /// The departures after the oldest: `len - 1` of them from `head`.
    rest: Vec<Departure>,
    head: u32,
    len: u32,
}

impl Ring {
    #[inline(always)]
    fn mask(&self) -> u32 {
        self.rest.len() as u32 - 1
    }
    #[inline(always)]
    fn len(&self) -> u32 {
        self.len
    }
    #[inline(always)]
    fn get(&self, i: u32) -> Option<&Departure> {
        match i {
            _ if i >= self.len => None,
            0 => Some(&self.front),
            _ => Some(&self.rest[((self.head + i - 1) & self.mask()) as usize]),
        }
    }
    #[inline(always)]
    fn front(&self) -> Option<&Departure> {
        (self.len > 0).then_some(&self.front)
    }
    #[inline(always)]
    fn pop_front(&mut self) {
        debug_assert!(self.len > 0);
        if self.len > 1 {
            self.front = self.rest[self.head as usize];
            self.head = (self.head + 1) & self.mask();
        }
        self.len -= 1;
    }
    #[inline(always)]
    fn push_back(&mut self, d: Departure) {
        if self.len == 0 {
            self.front = d;
        } else {
            let behind = self.len - 1;
            if behind as usize == self.rest.len() {
                self.grow();
            }
            let i = (self.head + behind) & self.mask();
            self.rest[i as usize] = d;
        }
        self.len += 1;
    }
    #[cold]
    fn grow(&mut self) {
        let cap = (self.rest.len() * 2).max(8);
        let mut rest = Vec::with_capacity(cap);
        rest.extend((1..self.len).map(|i| *self.get(i).expect("in range")));
        rest.resize(cap, Departure::default());
        (self.rest, self.head) = (rest, 0);
    }
    fn iter(&self) -> impl Iterator<Item = &Departure> {
        (0..self.len).map(move |i| self.get(i).expect("in range"))
    }
    fn capacity(&self) -> usize {
        self.rest.len() + 1
    }
}

/// One direction of a link: the egress queue of `owner` towards `peer`.
///
/// `repr(C, align(64))` keeps the fields in this order from a cache line boundary: what admission and
/// popping on a lazy port touch comes first, in three lines and the flags and the wire fault at the start
/// of the fourth (the switch path touches one port per hop; a port's fields spread over five lines cost a
/// cache miss each; S1: 14% fewer L1 misses than unaligned). Since the oldest departure moved inline, the
/// flags no longer fit the third line; fields reordered to put them back there measured slower on S1
/// (docs/performance.md, round 5), so the order stays.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Port {
    // --- hot: admission and popping ---
    /// Bytes queued, the packet in service included; on a lazy port, of every packet not yet popped
    /// (read it through [`Port::queue_bytes_at`]).
    pub queued_bytes: u64,
    /// A lazy port's serialiser is busy until then (the last admitted packet's departure).
    busy_until: Time,
    /// Buffer limit in bytes (`u64::MAX` when limited by packets).
    pub cap_bytes: u64,
    /// Picoseconds per byte when the rate divides 8e12 exactly (every usual rate does), else 0.
    ps_per_byte: u64,
    /// A lazy port's packets in FIFO order with their departure times.
    departures: Ring,
    /// Integral of queued bytes over time, in byte-picoseconds (exact): on an event-driven port up to
    /// `area_updated`; on a lazy port every admitted packet's bytes times its whole time in the queue
    /// (the same integral, read through [`Port::queue_area_by`]).
    queue_area: u128,
    area_updated: Time,
    pub delay: Time,
    /// ECN marking threshold (DCTCP's K).
    pub ecn_k: Threshold,
    pub peak_queue_bytes: u64,
    /// Buffer limit in packets (`u32::MAX` when limited by bytes).
    pub cap_packets: u32,
    pub peak_queue_packets: u32,
    pub owner: NodeId,
    pub peer: NodeId,
    /// On a lazy port: the peer's own port on this link, through which its packets arrive there.
    reverse: PortId,
    /// See [`PortLink::slot`].
    pub slot: u32,
    /// Packets refused at admission: buffer full, or the link down.
    pub drops: u64,
    pub ecn_marks: u64,
    /// A lazy port's admitted packets and bytes (what it has sent is these less what it still holds).
    admitted_packets: u64,
    admitted_bytes: u64,
    /// Lazily drained (see the module doc): packets are in `departures`, not `queue`.
    lazy: bool,
    pub up: bool,
    pub role: PortRole,
    /// Packet kinds of the control class, as a set of [`crate::packet::PacketKind::bit`]; empty: none.
    control_kinds: u8,
    /// Priority levels of the data FIFOs (at least 1; see the module doc).
    levels: u8,
    // --- cold ---
    pub fault: WireFault,
    /// The rate estimator the switch's balancer asked for on this port, if any ([`Port::estimate_rate`]).
    dre: Option<Box<RateEstimator>>,

    // --- the rest ---
    pub rate: Rate,
    /// An event-driven port's FIFOs in the order served: the control class first if the port has one,
    /// then one per priority level, the top level first ([`Port::fifo_of`]).
    fifos: Vec<Fifo>,
    /// While `busy`: the FIFO whose head is on the wire.
    serving: u8,
    busy: bool,
    /// While `busy`: when the packet on the wire finishes serialisation, and its wire bytes.
    service_end: Time,
    service_bytes: u64,
    /// An event-driven port's packets and bytes sent (see [`Port::bytes_sent`]).
    bytes_sent: u64,
    packets_sent: u64,
    /// Packets lost on the wire to a [`WireFault`].
    pub wire_losses: u64,
}

/// One FIFO of an event-driven port: its packets (arena ids, with when each was admitted) and their wire
/// bytes. The head is on the wire while the port is busy serving this FIFO.
#[derive(Clone, Debug, Default)]
struct Fifo {
    packets: VecDeque<(u32, Time)>,
    bytes: u64,
}

fn exact_ps_per_byte(rate: Rate) -> u64 {
    const PS_BITS: u64 = 8_000_000_000_000;
    if rate.bps() > 0 && PS_BITS.is_multiple_of(rate.bps()) {
        PS_BITS / rate.bps()
    } else {
        0
    }
}

impl Port {
    pub fn new(link: PortLink, buffer: Buffer, ecn_k: Threshold) -> Port {
        Port {
            queued_bytes: 0,
            busy_until: Time::ZERO,
            cap_bytes: buffer.bytes,
            ps_per_byte: exact_ps_per_byte(link.rate),
            departures: Ring::default(),
            queue_area: 0,
            area_updated: Time::ZERO,
            delay: link.delay,
            ecn_k,
            peak_queue_bytes: 0,
            cap_packets: buffer.packets,
            peak_queue_packets: 0,
            owner: link.owner,
            peer: link.peer,
            reverse: PortId::NONE,
            slot: link.slot,
            drops: 0,
            ecn_marks: 0,
            admitted_packets: 0,
            admitted_bytes: 0,
            lazy: false,
            up: true,
            role: link.role,
            control_kinds: 0,
            levels: 1,
            fault: WireFault::None,
            dre: None,
            rate: link.rate,
            fifos: vec![Fifo::default()],
            serving: 0,
            busy: false,
            service_end: Time::ZERO,
            service_bytes: 0,
            bytes_sent: 0,
            packets_sent: 0,
            wire_losses: 0,
        }
    }

    /// Serialisation time of `bytes` on this port (a multiply on the hot path, exact either way).
    #[inline]
    pub fn tx_time(&self, bytes: u32) -> Time {
        if self.ps_per_byte != 0 {
            Time(bytes as u64 * self.ps_per_byte)
        } else {
            self.rate.tx_time(Bytes(bytes as u64))
        }
    }

    pub fn set_rate(&mut self, rate: Rate) {
        self.rate = rate;
        self.ps_per_byte = exact_ps_per_byte(rate);
    }

    pub fn set_limits(&mut self, buffer: Buffer, ecn_k: Threshold) {
        self.cap_packets = buffer.packets;
        self.cap_bytes = buffer.bytes;
        self.ecn_k = ecn_k;
    }

    /// Would a packet of `wire` bytes overflow the buffer? (On a lazy port, pop the departed packets first.)
    #[inline]
    pub fn would_overflow(&self, wire: u32) -> bool {
        self.queue_packets() >= self.cap_packets || self.queued_bytes + wire as u64 > self.cap_bytes
    }

    /// Packets queued in every FIFO, the one in service included; on a lazy port, every packet not yet
    /// popped (see [`Port::queue_packets_at`]).
    #[inline]
    pub fn queue_packets(&self) -> u32 {
        if self.lazy {
            self.departures.len()
        } else {
            self.fifos.iter().map(|f| f.packets.len() as u32).sum()
        }
    }

    /// Serves the packet kinds in `kinds` (a set of [`crate::packet::PacketKind::bit`]) as a strict-priority
    /// control class, ahead of every priority level. Only while the port is empty.
    pub fn set_control_kinds(&mut self, kinds: u8) {
        assert!(kinds == 0 || self.dre.is_none(), "a port with a rate estimator serves one FIFO");
        self.control_kinds = kinds;
        self.reshape();
    }

    /// The packet kinds served as a control class (see [`Port::set_control_kinds`]).
    pub fn control_kinds(&self) -> u8 {
        self.control_kinds
    }

    /// Gives the port `levels` strict-priority FIFOs for data (at least 1; 1: one FIFO, the default). Only
    /// while the port is empty, and on a port without a rate estimator when `levels > 1`.
    pub fn set_priority_levels(&mut self, levels: u8) {
        assert!(levels >= 1, "a port has at least one priority level");
        assert!(levels == 1 || self.dre.is_none(), "a port with a rate estimator serves one FIFO");
        self.levels = levels;
        self.reshape();
    }

    /// The port's priority levels (see [`Port::set_priority_levels`]).
    #[inline]
    pub fn priority_levels(&self) -> u8 {
        self.levels
    }

    /// One FIFO per class served: the control class (if any), then one per priority level.
    fn reshape(&mut self) {
        assert!(self.queue_packets() == 0 && !self.busy, "a port changes its classes only while empty");
        let n = (self.control_kinds != 0) as usize + self.levels as usize;
        self.fifos = vec![Fifo::default(); n];
    }

    /// The FIFO a packet of `kind` at priority `level` joins: the control class if its kind is one, else
    /// its level's (clamped to the lowest).
    #[inline]
    fn fifo_of(&self, kind: crate::packet::PacketKind, level: u8) -> usize {
        if self.control_kinds & kind.bit() != 0 {
            0
        } else {
            self.level_fifo(level)
        }
    }

    /// The FIFO of data priority `level` (clamped to the lowest).
    #[inline]
    fn level_fifo(&self, level: u8) -> usize {
        (self.control_kinds != 0) as usize + level.min(self.levels - 1) as usize
    }

    /// Makes an idle port lazily drained (see the module doc), or event-driven again; `reverse` is the peer's
    /// own port on this link (the `via` of the arrivals the port schedules). A port with more than one FIFO
    /// (a control class, or several priority levels) stays event-driven; the answer is whether the port is
    /// lazy now.
    pub fn set_lazy(&mut self, lazy: bool, reverse: PortId) -> bool {
        assert!(self.queue_packets() == 0 && !self.busy, "a port changes its draining only while empty");
        self.lazy = lazy && self.fifos.len() == 1;
        self.reverse = reverse;
        self.lazy
    }

    /// Whether the port is lazily drained.
    #[inline]
    pub fn is_lazy(&self) -> bool {
        self.lazy
    }

    /// Keeps a rate estimator ([`crate::dre`]) on this port from now on, for its switch's balancer. Only
    /// on a port that serves one FIFO (no control class), before the run (the port idle).
    pub fn estimate_rate(&mut self, cfg: DreConfig) {
        assert!(self.fifos.len() == 1, "a rate estimator needs a FIFO port");
        assert!(self.queue_packets() == 0 && !self.busy, "a port gets its rate estimator while empty");
        self.dre = Some(Box::new(RateEstimator::new(cfg)));
    }

    /// The port's rate estimator, if it keeps one.
    #[inline]
    pub fn rate_estimator(&self) -> Option<&RateEstimator> {
        self.dre.as_deref()
    }

    /// The port's rate estimator, for a test bench that counts departures by hand.
    pub fn rate_estimator_mut(&mut self) -> Option<&mut RateEstimator> {
        self.dre.as_deref_mut()
    }

    /// The rate estimator's register at `now` (`None` on a port without one).
    #[inline]
    pub fn dre_at(&self, now: Time) -> Option<Dre> {
        self.dre.as_deref().map(|d| d.at(now))
    }

    /// On a lazy port: the peer's own port on this link.
    #[inline]
    pub fn reverse(&self) -> PortId {
        self.reverse
    }

    /// A lazy port's packets not yet popped, in FIFO order (departed ones included until popped).
    pub fn departures(&self) -> impl Iterator<Item = &Departure> {
        self.departures.iter()
    }

    /// Bytes of buffer the queues' deques hold (for memory estimates).
    pub fn queue_capacity_bytes(&self) -> usize {
        self.fifos.iter().map(|f| f.packets.capacity() * std::mem::size_of::<(u32, Time)>()).sum::<usize>() + self.fifos.capacity() * std::mem::size_of::<Fifo>() + self.departures.capacity() * std::mem::size_of::<Departure>() + self.dre.as_deref().map_or(0, |d| std::mem::size_of::<RateEstimator>() + d.heap_bytes())
    }

    /// On a lazy port: the packets and bytes at the head that have left by `now` but are not popped yet.
    #[inline]
    fn departed_by(&self, now: Time) -> (u32, u64) {
        let (mut n, mut bytes) = (0u32, 0u64);
        for d in self.departures.iter() {
            if !d.left_by(now) {
                break;
            }
            n += 1;
            bytes += d.wire() as u64;
        }
        (n, bytes)
    }

    /// Bytes queued at `now`, the packet in service included (exact on either kind of port).
    #[inline]
    pub fn queue_bytes_at(&self, now: Time) -> u64 {
        if self.lazy {
            self.queued_bytes - self.departed_by(now).1
        } else {
            self.queued_bytes
        }
    }

    /// Packets queued at `now` in every FIFO, the packet in service included.
    #[inline]
    pub fn queue_packets_at(&self, now: Time) -> u32 {
        if self.lazy {
            self.departures.len() - self.departed_by(now).0
        } else {
            self.queue_packets()
        }
    }

    /// Bytes queued at `now` in the FIFO of data priority `level` (clamped to the port's lowest), the
    /// packet in service included if it is of that FIFO. A port with one level holds its whole data queue
    /// there (and a lazy port is such a port). The control class, if any, is no level's.
    pub fn level_bytes_at(&self, now: Time, level: u8) -> u64 {
        if self.lazy {
            self.queue_bytes_at(now)
        } else {
            self.fifos[self.level_fifo(level)].bytes
        }
    }

    /// Packets queued at `now` in the FIFO of data priority `level` (as [`Port::level_bytes_at`]).
    pub fn level_packets_at(&self, now: Time, level: u8) -> u32 {
        if self.lazy {
            self.queue_packets_at(now)
        } else {
            self.fifos[self.level_fifo(level)].packets.len() as u32
        }
    }

    /// Removes the head packet if it has left by `now`, counting it as sent (and as lost on the wire if so)
    /// and integrating the queue up to its departure. The caller frees a lost packet and counts its bytes
    /// as dropped; a delivered one is already on its way to the next hop.
    #[inline]
    pub fn pop_departed(&mut self, now: Time) -> Option<Departure> {
        let d = *self.departures.front()?;
        if !d.left_by(now) {
            return None;
        }
        self.departures.pop_front();
        self.queued_bytes -= d.wire() as u64;
        if d.lost() {
            self.wire_losses += 1;
        }
        Some(d)
    }

    /// Bytes this port has sent (serialised): on a lazy port, call after popping what has left.
    pub fn bytes_sent(&self) -> u64 {
        if self.lazy {
            self.admitted_bytes - self.queued_bytes
        } else {
            self.bytes_sent
        }
    }

    /// Bytes this port has sent by `now`, without letting go of anything: on a lazy port, the departures
    /// not yet popped that have left by `now` count (a reading that changes no state, so taking it at any
    /// moment leaves the run as it was).
    pub fn bytes_sent_by(&self, now: Time) -> u64 {
        if !self.lazy {
            return self.bytes_sent;
        }
        let left: u64 = self.departures.iter().take_while(|d| d.left_by(now)).map(|d| d.wire() as u64).sum();
        self.admitted_bytes - self.queued_bytes + left
    }

    /// Packets this port has sent (serialised): on a lazy port, call after popping what has left.
    pub fn packets_sent(&self) -> u64 {
        if self.lazy {
            self.admitted_packets - self.departures.len() as u64
        } else {
            self.packets_sent
        }
    }

    /// The queue-area integral up to `end` (exact byte-picoseconds; the time-averaged queue is this over
    /// the run's span): an event-driven port brings it up to `end`; a lazy one, which counts each packet's
    /// whole stay at admission, leaves out the part of the packets still queued that falls after `end`.
    pub fn queue_area_by(&mut self, end: Time) -> u128 {
        if !self.lazy {
            self.account_area(end);
            return self.queue_area;
        }
        let after: u128 = self.departures.iter().filter(|d| d.at > end).map(|d| d.wire() as u128 * (d.at - end).0 as u128).sum();
        self.queue_area - after
    }

    /// Brings the queue-area integral (for the time-averaged queue) up to `now`.
    #[inline]
    pub fn account_area(&mut self, now: Time) {
        let dt = now.saturating_sub(self.area_updated);
        if dt.0 > 0 {
            self.queue_area += self.queued_bytes as u128 * dt.0 as u128;
            self.area_updated = now;
        }
    }

    /// Exactly how long a packet enqueued now, behind everything queued, would wait before its own
    /// serialisation starts: the rest of the packet on the wire plus the bytes queued behind it at the
    /// port's rate. [`Port::queue_delay`] counts the packet on the wire whole instead. On a port with
    /// several priority levels this is the wait of a packet of the lowest level if nothing arrives after
    /// it; a higher level waits behind less, and anyone may be overtaken later.
    pub fn wait_time(&self, now: Time) -> Time {
        let (rest, waiting) = if self.lazy {
            let (n, bytes) = self.departed_by(now);
            match self.departures.get(n) {
                // The first packet not departed is on the wire: the one ahead has left by now.
                Some(head) => (head.at - now, self.queued_bytes - bytes - head.wire() as u64),
                None => (Time::ZERO, 0),
            }
        } else {
            let rest = if self.busy { self.service_end.saturating_sub(now) } else { Time::ZERO };
            (rest, self.queued_bytes - self.service_bytes)
        };
        rest + self.bytes_time(waiting)
    }

    fn bytes_time(&self, bytes: u64) -> Time {
        if self.ps_per_byte != 0 {
            Time(bytes * self.ps_per_byte)
        } else {
            self.rate.tx_time(Bytes(bytes))
        }
    }

    /// Time to drain the current queue at the port's rate, the packet on the wire counted whole (on a
    /// lazy port, of the packets not yet popped: see [`Port::queue_delay_at`]).
    pub fn queue_delay(&self) -> Time {
        self.bytes_time(self.queued_bytes)
    }

    /// [`Port::queue_delay`] at `now` (exact on a lazy port too).
    pub fn queue_delay_at(&self, now: Time) -> Time {
        self.bytes_time(self.queue_bytes_at(now))
    }

    /// The queue in the unit of the marking threshold.
    #[inline]
    fn queue_in(&self, unit: QueueUnit) -> u64 {
        match unit {
            QueueUnit::Packets => self.queue_packets() as u64,
            QueueUnit::Bytes => self.queued_bytes,
        }
    }

    /// Offers packet `pid` to the queue. A port that is down or full drops it (counted here; the caller
    /// frees the packet) and returns `None`. Otherwise the DCTCP rule marks an ECN-capable packet that finds
    /// `ecn_k` or more (packets or bytes) queued, the packet joins the tail, and the answer is whether it
    /// carried CE before this port (for [`Port::count_mark`] once the balancer has had its say).
    ///
    /// On a lazy port the caller pops the departed packets first ([`Port::pop_departed`]); the packet's
    /// departure is then fixed here: its wait is added to its queueing delay and the wire draws its fate
    /// (the simulation's hot path calls `admit_lazy`, which also answers the departure).
    #[inline]
    pub fn admit(&mut self, now: Time, pid: u32, pkt: &mut Packet) -> Option<bool> {
        if self.lazy {
            return self.admit_lazy(now, pid, pkt).map(|(was_ce, _)| was_ce);
        }
        if !self.up || self.would_overflow(pkt.wire_bytes) {
            self.drops += 1;
            return None;
        }
        let was_ce = pkt.ecn.ce;
        if pkt.ecn.ect && self.ecn_k.k > 0 && self.queue_in(self.ecn_k.unit) >= self.ecn_k.k {
            pkt.ecn.ce = true;
        }
        self.account_area(now);
        if self.dre.is_some() {
            // One FIFO: the packet leaves after the one admitted before it (or now), plus its serialisation.
            let tx = self.tx_time(pkt.wire_bytes);
            let dre = self.dre.as_deref_mut().expect("checked");
            let at = now.max(dre.last_departure()) + tx;
            dre.count(now, at, pkt.wire_bytes);
        }
        let i = self.fifo_of(pkt.kind, pkt.priority);
        let fifo = &mut self.fifos[i];
        fifo.packets.push_back((pid, now));
        fifo.bytes += pkt.wire_bytes as u64;
        self.queued_bytes += pkt.wire_bytes as u64;
        self.peak_queue_bytes = self.peak_queue_bytes.max(self.queued_bytes);
        self.peak_queue_packets = self.peak_queue_packets.max(self.queue_packets());
        Some(was_ce)
    }

    /// [`Port::admit`] on a lazy port (the caller popped what has left), with the packet's departure: the
    /// caller schedules from it directly (reading it back from the ring cost a branch and a load of the
    /// ring's buffer per hop: S1 about 5% of the loop's time).
    #[inline(always)]
    pub(crate) fn admit_lazy(&mut self, now: Time, pid: u32, pkt: &mut Packet) -> Option<(bool, Departure)> {
        let wire = pkt.wire_bytes;
        let packets = self.departures.len();
        if !self.up || packets >= self.cap_packets || self.queued_bytes + wire as u64 > self.cap_bytes {
            self.drops += 1;
            return None;
        }
        let was_ce = pkt.ecn.ce;
        if pkt.ecn.ect && self.ecn_k.k > 0 {
            let q = match self.ecn_k.unit {
                QueueUnit::Packets => packets as u64,
                QueueUnit::Bytes => self.queued_bytes,
            };
            pkt.ecn.ce |= q >= self.ecn_k.k;
        }
        let start = now.max(self.busy_until);
        pkt.queue_delay += start - now;
        self.busy_until = start + self.tx_time(wire);
        // The packet's whole stay in the queue, from now to its departure.
        self.queue_area += wire as u128 * (self.busy_until - now).0 as u128;
        let lost = !matches!(self.fault, WireFault::None) && self.draws_loss();
        if let Some(dre) = self.dre.as_deref_mut() {
            dre.count(now, self.busy_until, wire);
        }
        let d = Departure::new(self.busy_until, wire, pid, lost);
        self.departures.push_back(d);
        self.admitted_packets += 1;
        self.admitted_bytes += wire as u64;
        self.queued_bytes += wire as u64;
        self.peak_queue_bytes = self.peak_queue_bytes.max(self.queued_bytes);
        self.peak_queue_packets = self.peak_queue_packets.max(packets + 1);
        Some((was_ce, d))
    }

    /// Counts a CE mark this port gave an admitted packet (by the DCTCP rule or its balancer): `was_ce` as
    /// [`Port::admit`] answered, `is_ce` as the packet leaves admission.
    #[inline]
    pub fn count_mark(&mut self, was_ce: bool, is_ce: bool) {
        if is_ce && !was_ce {
            self.ecn_marks += 1;
        }
    }

    /// If the serialiser is idle and a packet waits, starts sending the head packet of the first FIFO that
    /// holds one (strict priority) and returns it with the time it will have left; the head's wait is added
    /// to its queueing delay.
    #[inline]
    pub fn start_service(&mut self, now: Time, pkts: &mut PacketArena) -> Option<(u32, Time)> {
        debug_assert!(!self.lazy, "a lazy port has no service events");
        if self.busy {
            return None;
        }
        let i = self.fifos.iter().position(|f| !f.packets.is_empty())?;
        self.serving = i as u8;
        let (head, since) = self.fifos[i].packets[0];
        let p = pkts.get_mut(head);
        p.queue_delay += now - since;
        self.busy = true;
        self.service_end = now + self.tx_time(p.wire_bytes);
        self.service_bytes = p.wire_bytes as u64;
        Some((head, self.service_end))
    }

    /// The head packet has been serialised: removes it, counts it, frees the serialiser, and returns its id.
    #[inline]
    pub fn finish_service(&mut self, now: Time, pkts: &PacketArena) -> u32 {
        let served = &mut self.fifos[self.serving as usize];
        let (pid, _) = served.packets.pop_front().expect("a port finished serving an empty queue");
        let wire = pkts.get(pid).wire_bytes as u64;
        served.bytes -= wire;
        self.account_area(now);
        self.queued_bytes -= wire;
        self.bytes_sent += wire;
        self.packets_sent += 1;
        self.busy = false;
        self.service_bytes = 0;
        pid
    }

    /// Whether the packet just serialised is lost on the wire (counted here).
    #[inline]
    pub fn loses_on_wire(&mut self) -> bool {
        let lost = self.draws_loss();
        self.wire_losses += lost as u64;
        lost
    }

    /// The wire's verdict on the next packet serialised, in serialisation order (a lazy port draws it at
    /// admission and counts it when the packet departs).
    #[inline]
    fn draws_loss(&mut self) -> bool {
        match &mut self.fault {
            WireFault::None => false,
            WireFault::Blackhole => true,
            WireFault::Lossy { rate, rng } => rng.unit() < *rate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;
    use crate::ids::{FlowId, HostId};

    fn port(buffer: Buffer, ecn_k: Threshold) -> Port {
        let link = PortLink { owner: NodeId(0), peer: NodeId(1), role: PortRole::LeafDown, slot: 0, rate: Rate::from_gbps(10.0), delay: Time::ZERO };
        Port::new(link, buffer, ecn_k)
    }

    /// Offers a packet of `wire` bytes; whether it was admitted and whether it left admission marked.
    fn offer(port: &mut Port, pkts: &mut PacketArena, kind: PacketKind, wire: u32) -> (bool, bool) {
        let mut p = Packet::new(kind, FlowId(0), HostId(0), HostId(1));
        p.wire_bytes = wire;
        p.ecn.ect = true;
        let pid = pkts.alloc(p);
        let admitted = port.admit(Time::ZERO, pid, pkts.get_mut(pid)).is_some();
        (admitted, pkts.get(pid).ecn.ce)
    }

    /// Queues a 100 B packet of `kind` (which must be admitted) and returns its id.
    fn queue(port: &mut Port, pkts: &mut PacketArena, kind: PacketKind) -> u32 {
        let pid = pkts.alloc(Packet::new(kind, FlowId(0), HostId(0), HostId(1)));
        pkts.get_mut(pid).wire_bytes = 100;
        assert!(port.admit(Time::ZERO, pid, pkts.get_mut(pid)).is_some());
        pid
    }

    #[test]
    fn the_departure_ring_keeps_fifo_order_through_growth_and_wrap_around() {
        // Against a VecDeque: pushes and pops in bursts that wrap the ring's buffer many times and grow it
        // from empty (every read goes through the inline oldest entry and the ring behind it).
        let mut ring = Ring::default();
        let mut model = std::collections::VecDeque::new();
        let mut rng = crate::rng::Rng::new(3);
        for step in 0..20_000u64 {
            let burst = rng.below(if step % 1000 < 500 { 3 } else { 40 }) as u64;
            for k in 0..burst {
                let d = Departure::new(Time(step * 100 + k), 64 + k as u32, (step * 64 + k) as u32, k % 7 == 0);
                ring.push_back(d);
                model.push_back(d);
            }
            for _ in 0..rng.below(4 + burst as usize) {
                assert_eq!(ring.front(), model.front());
                if model.pop_front().is_some() {
                    ring.pop_front();
                }
            }
            assert_eq!(ring.len() as usize, model.len());
            assert_eq!(ring.len.checked_sub(1).and_then(|i| ring.get(i)), model.back());
            assert!(ring.iter().eq(model.iter()), "step {step}");
            assert!(ring.capacity() >= model.len());
        }
        assert!(ring.capacity() >= 32, "the bursts grew the ring");
    }

    #[test]
    fn the_control_class_goes_first_never_preempts_and_shares_the_buffer() {
        let mut pkts = PacketArena::new();
        let mut p = port(Buffer { packets: 4, bytes: u64::MAX }, Threshold::OFF);
        p.set_control_kinds(PacketKind::Ack.bit() | PacketKind::Probe.bit());
        let ids: Vec<u32> = [PacketKind::Data, PacketKind::Data, PacketKind::Ack, PacketKind::Probe].into_iter().map(|k| queue(&mut p, &mut pkts, k)).collect();
        assert!(!offer(&mut p, &mut pkts, PacketKind::Ack, 100).0, "both classes count towards the 4-packet buffer");
        let mut order = Vec::new();
        while let Some((pid, done)) = p.start_service(Time::ZERO, &mut pkts) {
            assert_eq!(p.finish_service(done, &pkts), pid);
            order.push(pid);
        }
        assert_eq!(order, vec![ids[2], ids[3], ids[0], ids[1]], "control first, each class in order");
        // A control packet arriving while data is on the wire waits for it, then goes before the rest.
        let first = queue(&mut p, &mut pkts, PacketKind::Data);
        let (on_wire, done) = p.start_service(Time::ZERO, &mut pkts).unwrap();
        assert_eq!(on_wire, first);
        queue(&mut p, &mut pkts, PacketKind::Data);
        let ack = queue(&mut p, &mut pkts, PacketKind::Ack);
        assert_eq!(p.finish_service(done, &pkts), first, "no preemption");
        assert_eq!(p.start_service(done, &mut pkts).unwrap().0, ack);
    }

    #[test]
    fn a_byte_buffer_charges_an_ack_its_bytes_not_a_slot() {
        let mut pkts = PacketArena::new();
        // 3,000 B: two full-size packets, or 75 ACKs.
        let mut bytes = port(Buffer { packets: u32::MAX, bytes: 3000 }, Threshold::OFF);
        assert!((0..75).all(|_| offer(&mut bytes, &mut pkts, PacketKind::Ack, 40).0));
        assert!(!offer(&mut bytes, &mut pkts, PacketKind::Ack, 40).0, "the 76th ACK overflows 3,000 B");
        let mut slots = port(Buffer { packets: 2, bytes: u64::MAX }, Threshold::OFF);
        assert!((0..2).all(|_| offer(&mut slots, &mut pkts, PacketKind::Ack, 40).0));
        assert!(!offer(&mut slots, &mut pkts, PacketKind::Ack, 40).0, "a packet buffer counts an ACK as a packet");
    }

    #[test]
    fn a_byte_threshold_is_not_reached_by_a_queue_of_acks() {
        let mut pkts = PacketArena::new();
        // K = 65 full-size packets, in bytes or in packets; 100 ACKs queued ahead of a data packet.
        for (k, marked) in [(Threshold { unit: QueueUnit::Bytes, k: 97_500 }, false), (Threshold { unit: QueueUnit::Packets, k: 65 }, true)] {
            let mut p = port(Buffer { packets: u32::MAX, bytes: 384_000 }, k);
            for _ in 0..100 {
                offer(&mut p, &mut pkts, PacketKind::Ack, 40);
            }
            assert_eq!(offer(&mut p, &mut pkts, PacketKind::Data, 1500), (true, marked), "{k:?}");
        }
        // 65 full-size packets reach the byte threshold.
        let mut p = port(Buffer { packets: u32::MAX, bytes: 384_000 }, Threshold { unit: QueueUnit::Bytes, k: 97_500 });
        for _ in 0..65 {
            offer(&mut p, &mut pkts, PacketKind::Data, 1500);
        }
        assert_eq!(offer(&mut p, &mut pkts, PacketKind::Data, 1500), (true, true));
    }

    /// An event-driven port run as the engine runs it: every serialisation that ends by `now` is finished
    /// (and the next one started) before anything else happens at `now`.
    struct Driven {
        port: Port,
        done: Option<Time>,
    }

    impl Driven {
        fn catch_up(&mut self, now: Time, pkts: &mut PacketArena) {
            while let Some(t) = self.done.filter(|&t| t <= now) {
                self.port.finish_service(t, pkts);
                self.done = self.port.start_service(t, pkts).map(|(_, end)| end);
            }
        }
        fn offer(&mut self, now: Time, pid: u32, pkts: &mut PacketArena) -> Option<bool> {
            self.catch_up(now, pkts);
            let r = self.port.admit(now, pid, pkts.get_mut(pid));
            if self.done.is_none() {
                self.done = self.port.start_service(now, pkts).map(|(_, end)| end);
            }
            r
        }
    }

    /// A lazy port as the simulation uses it: departed packets are popped before each admission.
    fn offer_lazy(port: &mut Port, now: Time, pid: u32, pkts: &mut PacketArena) -> Option<bool> {
        while port.pop_departed(now).is_some() {}
        port.admit(now, pid, pkts.get_mut(pid))
    }

    #[test]
    fn a_lazily_drained_port_shows_the_queue_of_the_event_driven_one() {
        // 10 Gbps: a 1,500 B packet takes 1.2 µs, a 40 B ACK 32 ns. Buffer 4 packets, K = 2 packets.
        let buffer = Buffer { packets: 4, bytes: u64::MAX };
        let k = Threshold { unit: QueueUnit::Packets, k: 2 };
        let mut driven = Driven { port: port(buffer, k), done: None };
        let mut lazy = port(buffer, k);
        assert!(lazy.set_lazy(true, PortId(7)));
        let mut pkts = PacketArena::new();
        let ns = Time::from_ns;
        // Arrivals: a burst that overflows, one at exactly a departure (1.2 µs: the packet leaving then is
        // gone), ACKs in between, a gap that empties the queue, and a last burst.
        let arrivals: Vec<(Time, u32)> = vec![
            (ns(0), 1500), (ns(0), 1500), (ns(0), 1500), (ns(0), 1500), (ns(0), 1500),
            (ns(1200), 1500), (ns(1300), 40), (ns(2400), 40), (ns(2432), 1500), (ns(3000), 1500),
            (ns(20_000), 1500), (ns(20_000), 1500), (ns(20_100), 40), (ns(21_200), 1500),
        ];
        let (mut outcomes, mut pairs) = (Vec::new(), Vec::new());
        for &(t, wire) in &arrivals {
            let mk = |pkts: &mut PacketArena| {
                let mut p = Packet::new(PacketKind::Data, FlowId(0), HostId(0), HostId(1));
                (p.wire_bytes, p.ecn.ect) = (wire, true);
                pkts.alloc(p)
            };
            let (a, b) = (mk(&mut pkts), mk(&mut pkts));
            // Read-only views first (what a balancer sees before the packet is admitted).
            driven.catch_up(t, &mut pkts);
            assert_eq!(lazy.queue_bytes_at(t), driven.port.queue_bytes_at(t), "bytes before the arrival at {t:?}");
            assert_eq!(lazy.queue_packets_at(t), driven.port.queue_packets(), "packets before the arrival at {t:?}");
            assert_eq!(lazy.wait_time(t), driven.port.wait_time(t), "wait before the arrival at {t:?}");
            assert_eq!(lazy.queue_delay_at(t), driven.port.queue_delay(), "queue delay at {t:?}");
            let (ra, rb) = (driven.offer(t, a, &mut pkts), offer_lazy(&mut lazy, t, b, &mut pkts));
            assert_eq!(ra, rb, "admission at {t:?}");
            assert_eq!(pkts.get(a).ecn.ce, pkts.get(b).ecn.ce, "marking at {t:?}");
            assert_eq!(lazy.queued_bytes, driven.port.queued_bytes, "bytes after the arrival at {t:?}");
            outcomes.push((ra.is_some(), pkts.get(a).ecn.ce));
            pairs.push((a, b));
        }
        // The sequence exercises what it means to: drops at the burst, marks, and an admission at 1.2 µs
        // that finds the departing packet gone (4 queued, not 5: admitted).
        assert_eq!(outcomes.iter().filter(|o| !o.0).count(), 4, "{outcomes:?}");
        assert!(outcomes[5].0, "the packet leaving at 1.2 µs has left: {outcomes:?}");
        assert!(outcomes.iter().any(|o| o.1), "{outcomes:?}");
        let end = ns(100_000);
        driven.catch_up(end, &mut pkts);
        while lazy.pop_departed(end).is_some() {}
        let counters = |p: &mut Port| (p.bytes_sent(), p.packets_sent(), p.drops, p.ecn_marks, p.peak_queue_bytes, p.peak_queue_packets, p.queue_area_by(end), p.queued_bytes);
        assert_eq!(counters(&mut lazy), counters(&mut driven.port));
        // Mid-run, with packets still queued, the area up to then agrees too.
        assert_eq!(lazy.queue_area_by(end), driven.port.queue_area_by(end));
        // The lazy port adds a packet's wait when it admits it, the driven one when its service starts.
        for (a, b) in pairs {
            assert_eq!(pkts.get(a).queue_delay, pkts.get(b).queue_delay);
        }
    }

    /// Breakage B6 of the lazy ports, at the port: the queue area up to an end that cuts a backlog leaves out
    /// what falls after the end (a lazy port counts each packet's whole stay when it admits it). Five
    /// 1,500 B packets at 0 on 10 Gbps leave at 1.2, 2.4, ... 6.0 µs; the end at 3 µs leaves three queued.
    #[test]
    fn the_queue_area_up_to_an_end_inside_a_backlog_is_the_event_driven_ports() {
        let buffer = Buffer { packets: 100, bytes: u64::MAX };
        let k = Threshold { unit: QueueUnit::Packets, k: 100 };
        let mut driven = Driven { port: port(buffer, k), done: None };
        let mut lazy = port(buffer, k);
        assert!(lazy.set_lazy(true, PortId(7)));
        let mut pkts = PacketArena::new();
        for _ in 0..5 {
            let mut mk = || {
                let mut p = Packet::new(PacketKind::Data, FlowId(0), HostId(0), HostId(1));
                p.wire_bytes = 1500;
                pkts.alloc(p)
            };
            let (a, b) = (mk(), mk());
            driven.offer(Time::ZERO, a, &mut pkts);
            offer_lazy(&mut lazy, Time::ZERO, b, &mut pkts);
        }
        let end = Time::from_ns(3000);
        driven.catch_up(end, &mut pkts);
        while lazy.pop_departed(end).is_some() {}
        assert_eq!(lazy.departures().count(), 3, "three packets still queued at the end");
        let (l, d) = (lazy.queue_area_by(end), driven.port.queue_area_by(end));
        assert!(d > 0);
        assert_eq!(l, d, "queue area up to 3 µs");
        assert_eq!((lazy.packets_sent(), lazy.bytes_sent()), (driven.port.packets_sent(), driven.port.bytes_sent()));
    }

    /// A DRE updated at each departure and decayed by a timer at every multiple of the period (after the
    /// departures of that instant): what a port's rate estimator, which counts packets at admission, must
    /// read like at every moment.
    struct DepartureDre {
        x: f64,
        decays: u64,
        period: u64,
        alpha: f64,
    }

    impl DepartureDre {
        fn decay_to(&mut self, t: Time) {
            let to = t.0.saturating_sub(1) / self.period;
            while self.decays < to {
                self.x *= 1.0 - self.alpha;
                self.decays += 1;
            }
        }
        fn depart(&mut self, t: Time, wire: u32) -> f64 {
            self.decay_to(t);
            self.x += wire as f64;
            self.x
        }
    }

    /// The rate estimator of a lazily drained port and of an event-driven one, both counting at admission,
    /// against a register counted at each actual departure (the event-driven port's serialisation ends) and
    /// decayed at each multiple of T: bursts that queue up to many periods ahead, an idle gap of many
    /// periods, sizes from ACKs to full packets, and readings 1 ps before, at and after every departure and
    /// every decay instant. Every reading, and every packet's register just after its own departure (what a
    /// CE stamp reads at enqueue), must be the same bits. Checked to fail with a decay at `k·T` counted
    /// before the departures of that instant (`decays_before` as `t / T`).
    #[test]
    fn a_ports_dre_counted_at_admission_reads_as_one_counted_at_each_departure() {
        use crate::dre::DreConfig;
        let cfg = DreConfig { period: Time::from_ns(4_000), alpha: 0.2 };
        let mut rng = Rng::new(5);
        // Arrivals: (time, wire). Bursts every ~3 µs for 60 µs, nothing for 100 µs, then more bursts.
        let mut arrivals: Vec<(Time, u32)> = Vec::new();
        for burst in 0..40u64 {
            let t = if burst < 20 { burst * 3_000_000 } else { 160_000_000 + burst * 2_500_000 };
            for _ in 0..rng.below(12) {
                arrivals.push((Time(t + rng.below(400_000) as u64), if rng.below(3) == 0 { 64 } else { 1500 }));
            }
        }
        arrivals.sort();
        // Runs the arrivals through both ports with readings at `reads` (sorted) in time order; returns the
        // departures (the event-driven port's serialisations ending) and the decays the reference made.
        let run = |reads: &[Time]| -> (Vec<Time>, u64) {
            let buffer = Buffer { packets: 1000, bytes: u64::MAX };
            let mut driven = Driven { port: port(buffer, Threshold::OFF), done: None };
            let mut lazy = port(buffer, Threshold::OFF);
            assert!(lazy.set_lazy(true, PortId(7)));
            driven.port.estimate_rate(cfg);
            lazy.estimate_rate(cfg);
            let mut reference = DepartureDre { x: 0.0, decays: 0, period: cfg.period.0, alpha: cfg.alpha };
            let mut pkts = PacketArena::new();
            // Each packet's register just after its departure, as the two ports said at admission.
            let mut ahead: std::collections::HashMap<u32, (u64, u64)> = Default::default();
            let mut departures = Vec::new();
            // The driven port's departures up to `t`, into the reference.
            let mut depart_by = |t: Time, driven: &mut Driven, pkts: &mut PacketArena, reference: &mut DepartureDre, ahead: &mut std::collections::HashMap<u32, (u64, u64)>| {
                while let Some(end) = driven.done.filter(|&e| e <= t) {
                    let pid = driven.port.finish_service(end, pkts);
                    let want = reference.depart(end, pkts.get(pid).wire_bytes).to_bits();
                    assert_eq!(ahead.remove(&pid), Some((want, want)), "the register just after the departure at {end:?}");
                    departures.push(end);
                    driven.done = driven.port.start_service(end, pkts).map(|(_, e)| e);
                }
            };
            let (mut i, mut j) = (0, 0);
            while i < arrivals.len() || j < reads.len() {
                if j < reads.len() && (i == arrivals.len() || reads[j] <= arrivals[i].0) {
                    let r = reads[j];
                    j += 1;
                    depart_by(r, &mut driven, &mut pkts, &mut reference, &mut ahead);
                    reference.decay_to(r);
                    let want = Some(reference.x.to_bits());
                    assert_eq!(driven.port.dre_at(r).map(|d| d.bytes().to_bits()), want, "event-driven port's DRE at {r:?}");
                    assert_eq!(lazy.dre_at(r).map(|d| d.bytes().to_bits()), want, "lazy port's DRE at {r:?}");
                    continue;
                }
                let (t, wire) = arrivals[i];
                i += 1;
                depart_by(t, &mut driven, &mut pkts, &mut reference, &mut ahead);
                let mk = |pkts: &mut PacketArena| {
                    let mut p = Packet::new(PacketKind::Data, FlowId(0), HostId(0), HostId(1));
                    p.wire_bytes = wire;
                    pkts.alloc(p)
                };
                let (a, b) = (mk(&mut pkts), mk(&mut pkts));
                assert!(driven.port.admit(t, a, pkts.get_mut(a)).is_some());
                if driven.done.is_none() {
                    driven.done = driven.port.start_service(t, &mut pkts).map(|(_, e)| e);
                }
                assert!(offer_lazy(&mut lazy, t, b, &mut pkts).is_some());
                let bits = |p: &Port| p.rate_estimator().expect("estimator").at_last_departure().bytes().to_bits();
                ahead.insert(a, (bits(&driven.port), bits(&lazy)));
            }
            depart_by(Time::MAX, &mut driven, &mut pkts, &mut reference, &mut ahead);
            assert!(ahead.is_empty());
            (departures, reference.decays)
        };
        let (departures, _) = run(&[]);
        // Readings 1 ps before, at and after every decay instant and every departure.
        let mut reads: Vec<Time> = (1..70u64).flat_map(|k| [k * cfg.period.0 - 1, k * cfg.period.0, k * cfg.period.0 + 1]).map(Time).collect();
        reads.extend(departures.iter().flat_map(|d| [Time(d.0 - 1), *d, Time(d.0 + 1)]));
        reads.sort();
        reads.dedup();
        let (again, decays) = run(&reads);
        assert_eq!(again, departures);
        assert!(departures.len() > 150 && decays > 60, "{} departures, {decays} decays", departures.len());
    }
}
