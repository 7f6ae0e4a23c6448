//! The network side of the simulation: the fabric's ports and switches, routing a packet through a
//! switch's balancer, ports admitting and serving packets, and the one place a balancer's context is built.
//!
//! ```text
//!  Arrive at a switch ─► on_arrival ─► candidates from routing ─┬─ none: routing drop
//!                                                               ├─ one (and the balancer does not ask
//!                                                               │  to see single choices): forwarded
//!                                                               └─ choose ─► Forward(port) ─► enqueue
//!                                                                          ─► Drop / Cancel (counted apart)
//!  enqueue: port admits (drop-tail, DCTCP mark, rate estimator) ─► on_enqueue (may re-mark) ─►
//!           lazy port: Arrive at the peer scheduled now (its departure is known)
//!           event-driven port: start serving if idle ─► TxDone
//!  TxDone:  port finishes serving ─► uplink accounting, on_departure ─► Arrive at the peer after the delay
//!           ─► next packet starts serving
//! ```
//!
//! The [`Network`] owns its state (fabric, ports, switches and their balancers, the uplink byte counts) and
//! its handlers take a [`Cx`]: the time, a schedule that only adds events, the packet arena. It knows
//! nothing of flows or TCP. Host NIC ports are ports like any other (a host has no switch balancer, so no
//! hooks run there); what the host stack must do about them comes back to the caller as a value, never as
//! a call into the host stack:
//!
//! * [`Leaving`]: a packet starts serialisation on a host NIC, at a time that may be ahead of now on a lazy
//!   NIC: it leaves its host then, and the host stack stamps it (`Hosts::leaving_host`: send timestamp,
//!   edge path choice). From `Network::enqueue_at_nic` and `Network::serve`.
//! * [`LeftHost`]: a data packet finished serialisation on its host's NIC: its sender may send more
//!   (`Hosts::left_nic`, TCP small queues). From `Network::tx_done` and `Network::left_nic`.
//!
//! The simulation's loop (`sim.rs`) passes them on; the host stack, which calls `Network::enqueue_at_nic` for
//! the packets it sends, handles the `Leaving` it gets back itself.

use crate::cx::Cx;
use crate::fabric::Fabric;
use crate::ids::{FlowId, HostId, NodeId, PortId};
use crate::lb::{Alarms, Decision, Hooks, MarkablePacket, PacketMut, PortsView, SwitchBalancer, SwitchCx, SwitchInfo, SwitchPlace};
use crate::packet::{Packet, PacketArena, PacketKind};
use crate::port::PortRole;
use crate::rng::Rng;
use crate::sched::{Event, Schedule};
use crate::units::Time;

/// One switch's balancer and what the engine counts about it.
pub(crate) struct SwitchState {
    pub info: SwitchInfo,
    pub lb: Box<dyn SwitchBalancer>,
    pub hooks: Hooks,
    pub rng: Rng,
    /// `choose` calls with more than one candidate.
    pub decisions: u64,
    /// Packets the balancer dropped (`Decision::Drop`).
    pub balancer_drops: u64,
    /// Packets the balancer dropped while cancelling their flow (`Decision::Cancel`).
    pub balancer_cancels: u64,
    /// Packets with no route (no working candidate port).
    pub routing_drops: u64,
}

impl SwitchState {
    pub fn new(info: SwitchInfo, lb: Box<dyn SwitchBalancer>, rng: Rng) -> SwitchState {
        SwitchState { info, hooks: lb.hooks(), lb, rng, decisions: 0, balancer_drops: 0, balancer_cancels: 0, routing_drops: 0 }
    }
}

/// A packet starting serialisation on a host NIC at `at` (now, or ahead of now on a lazy NIC): it leaves
/// its host then.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Leaving {
    pub pid: u32,
    pub at: Time,
}

/// A data packet of `flow`, `wire` bytes, that finished serialisation on its host's NIC.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LeftHost {
    pub kind: PacketKind,
    pub flow: FlowId,
    pub wire: u32,
}

/// What became of a packet a host offered its NIC: whether the NIC admitted it, and the packet that starts
/// serialisation because of it, if any (this one, or on an idle event-driven NIC its head): [`Leaving`].
/// Sixteen bytes, so that it comes back in two registers (the host stack sends two packets per data packet).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Enqueued {
    /// When the leaving packet starts serialisation; `Time::MAX`: none.
    at: Time,
    pid: u32,
    pub admitted: bool,
}

impl Enqueued {
    const REFUSED: Enqueued = Enqueued { at: Time::MAX, pid: u32::MAX, admitted: false };
    const QUEUED: Enqueued = Enqueued { at: Time::MAX, pid: u32::MAX, admitted: true };

    fn leaves(l: Leaving) -> Enqueued {
        Enqueued { at: l.at, pid: l.pid, admitted: true }
    }

    /// The packet that leaves its host because of this, if any.
    #[inline]
    pub fn leaving(&self) -> Option<Leaving> {
        (self.at != Time::MAX).then_some(Leaving { pid: self.pid, at: self.at })
    }
}

/// Runs `hook` on a switch's balancer with its context, then schedules the one-shot alarms it asked for.
/// Every balancer call goes through here: the one place a [`SwitchCx`] is built.
#[inline]
fn with_switch<R>(st: &mut SwitchState, fabric: &Fabric, schedule: &mut Schedule, alarms: &mut Alarms, now: Time, hook: impl FnOnce(&mut dyn SwitchBalancer, &mut SwitchCx) -> R) -> R {
    let n = fabric.node(st.info.node);
    debug_assert_eq!(now, schedule.now(), "balancers run at the event's time");
    let ports = PortsView::new(&fabric.ports, n.first_port, n.n_ports, now);
    let mut cx = SwitchCx { now, me: st.info, ports, facts: &fabric.facts, rng: &mut st.rng, alarms, ingress: None };
    let r = hook(&mut *st.lb, &mut cx);
    for (at, token) in alarms.drain(..) {
        schedule.at(at, Event::SwitchAlarm { node: st.info.node, token });
    }
    r
}

/// The network: fabric, ports, switches and their balancers (see the module doc).
pub struct Network {
    pub(crate) fabric: Fabric,
    pub(crate) switches: Vec<SwitchState>,
    /// Payload bytes per (flow, source-leaf uplink), row-major with `uplinks` columns.
    uplinks: usize,
    uplink_bytes: Vec<u64>,
    /// Wire bytes of a cancel notice a switch sends back to a flow's source.
    cancel_bytes: u32,
    /// Scratch: the alarms a balancer asks for during one hook.
    alarms: Alarms,
}

impl Network {
    /// A network over `fabric` with one switch state per switch (leaves then spines), counting uplink bytes
    /// for `flows` flows.
    pub(crate) fn new(fabric: Fabric, switches: Vec<SwitchState>, flows: usize, cancel_bytes: u32) -> Network {
        let uplinks = fabric.facts.uplinks as usize;
        Network { fabric, switches, uplinks, uplink_bytes: vec![0; flows * uplinks], cancel_bytes, alarms: Vec::new() }
    }

    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }

    /// Schedules every switch balancer's first periodic run.
    pub(crate) fn schedule_timers(&self, schedule: &mut Schedule) {
        for s in &self.switches {
            if let Some(p) = s.lb.timer_period().filter(|p| *p > Time::ZERO) {
                schedule.at(p, Event::SwitchTimer { node: s.info.node });
            }
        }
    }

    /// Makes ports lazily drained (`on`) or event-driven (`port.rs`). Lazy: every switch port, except those
    /// of switches whose balancer has a departure hook ([`crate::lb::Hooks::departure`]); and every host NIC
    /// when no host has an edge balancer (`host_edges`: one picks a data packet's path when its
    /// serialisation starts) and ACKs do not take priority (a second class breaks FIFO). Such a NIC serves
    /// one class: the probe kinds it would serve first are never sent without edge balancers. Only before
    /// the run starts (ports empty).
    pub(crate) fn set_lazy_ports(&mut self, on: bool, host_edges: bool) {
        let probes = PacketKind::Probe.bit() | PacketKind::ProbeReply.bit();
        for id in self.fabric.port_ids() {
            let reverse = self.fabric.reverse_port(id);
            let owner = self.fabric.switch_owning(self.fabric.port(id));
            let port = &mut self.fabric.ports[id.index()];
            let lazy = if let Some(sw) = owner {
                !self.switches[sw.index()].hooks.departure
            } else {
                let fifo = !host_edges && port.control_kinds() & !probes == 0;
                if fifo && on {
                    port.set_control_kinds(0);
                }
                fifo
            };
            port.set_lazy(on && lazy, reverse);
        }
    }

    /// Pops the packets of lazy port `port_id` that have left by `now`: counted as sent there, and a packet
    /// the wire lost is freed and counted as dropped.
    #[inline(always)]
    pub(crate) fn pop_departed(&mut self, pkts: &mut PacketArena, port_id: PortId, now: Time) {
        let port = self.fabric.port_mut(port_id);
        while let Some(d) = port.pop_departed(now) {
            if d.lost() {
                pkts.discard(d.pid, d.wire());
            }
        }
    }

    /// Every lazy port lets go of what has left by `end` (the end of a run, or a sample).
    pub(crate) fn pop_all_departed(&mut self, pkts: &mut PacketArena, end: Time) {
        for id in self.fabric.port_ids() {
            if self.fabric.port(id).is_lazy() {
                self.pop_departed(pkts, id, end);
            }
        }
    }

    /// Payload bytes per (flow, uplink) that have left their source leaf: a lazy uplink counts a packet at
    /// admission, so the packets it still holds (not departed: the caller popped the rest) are left out.
    pub(crate) fn uplink_bytes_departed(&self, pkts: &PacketArena) -> Vec<u64> {
        let mut out = self.uplink_bytes.clone();
        let facts = &self.fabric.facts;
        for port in self.fabric.ports.iter().filter(|p| p.is_lazy() && p.role == PortRole::LeafUp) {
            for d in port.departures() {
                let p = pkts.get(d.pid);
                if p.kind == PacketKind::Data && facts.leaf_of_host(p.src) == facts.leaf_at(port.owner) {
                    out[p.flow.index() * self.uplinks + port.slot as usize] -= p.payload as u64;
                }
            }
        }
        out
    }

    /// Uplinks per leaf: the width of [`Network::uplink_bytes_departed`]'s rows.
    pub(crate) fn uplinks(&self) -> usize {
        self.uplinks
    }

    /// Puts packet `pid`, made by host `host`, on its NIC ([`Network::enqueue`]); the answer names the
    /// packet that leaves its host because of this ([`Leaving`]), for the host stack to stamp.
    #[inline]
    pub(crate) fn enqueue_at_nic(&mut self, cx: &mut Cx, host: HostId, pid: u32) -> Enqueued {
        let port_id = self.fabric.host_nic(host);
        if self.fabric.port(port_id).is_lazy() {
            self.enqueue_lazy::<true>(cx, port_id, pid)
        } else {
            self.enqueue_driven::<true>(cx, port_id, pid)
        }
    }

    /// Puts packet `pid` into switch port `port_id`'s queue: the port admits it (drop-tail, DCTCP marking),
    /// the owning switch's balancer sees it, and the port starts serving if it was idle (a lazy port
    /// instead pops what has left before admitting, and schedules the packet's arrival at the next hop). A
    /// refused packet is counted as dropped and freed.
    #[inline]
    fn enqueue(&mut self, cx: &mut Cx, port_id: PortId, pid: u32) {
        if self.fabric.port(port_id).is_lazy() {
            self.enqueue_lazy::<false>(cx, port_id, pid);
        } else {
            self.enqueue_driven::<false>(cx, port_id, pid);
        }
    }

    /// [`Network::enqueue`] on a lazy port (a host NIC if `NIC`, else a switch port): what has left goes,
    /// the packet's departure is fixed at admission, and its arrival at the next hop is scheduled now. On a
    /// host NIC the packet leaves its host when its serialisation starts, and a data packet's departure
    /// wakes its sender ([`Event::LeftNic`], TCP small queues).
    #[inline(always)]
    fn enqueue_lazy<const NIC: bool>(&mut self, cx: &mut Cx, port_id: PortId, pid: u32) -> Enqueued {
        let now = cx.now;
        let port = &mut self.fabric.ports[port_id.index()];
        debug_assert_eq!(NIC, self.fabric.facts.is_host(port.owner));
        while let Some(d) = port.pop_departed(now) {
            if d.lost() {
                cx.pkts.discard(d.pid, d.wire());
            }
        }
        let p = cx.pkts.get_mut(pid);
        let Some((was_ce, d)) = port.admit_lazy(now, pid, p) else {
            let wire = p.wire_bytes;
            cx.pkts.discard(pid, wire);
            return Enqueued::REFUSED;
        };
        let owner = port.owner;
        let mut answer = Enqueued::QUEUED;
        if !NIC {
            let facts = &self.fabric.facts;
            let st = &mut self.switches[facts.switch_of(owner).index()];
            if st.hooks.enqueue {
                with_switch(st, &self.fabric, &mut cx.schedule, &mut self.alarms, now, |lb, sx| lb.on_enqueue(sx, &mut MarkablePacket::new(p), port_id));
            }
            let port = &mut self.fabric.ports[port_id.index()];
            // Counted at admission; the result tables leave out what has not departed by the end.
            if port.role == PortRole::LeafUp && p.kind == PacketKind::Data && facts.leaf_of_host(p.src) == facts.leaf_at(owner) {
                self.uplink_bytes[p.flow.index() * self.uplinks + port.slot as usize] += p.payload as u64;
            }
            port.count_mark(was_ce, p.ecn.ce);
        } else {
            port.count_mark(was_ce, p.ecn.ce);
            answer = Enqueued::leaves(Leaving { pid, at: d.at - port.tx_time(p.wire_bytes) });
            if p.kind == PacketKind::Data {
                // Also pops the packet, lost or not: no WireLoss event of its own.
                cx.schedule.at(d.at, Event::LeftNic { port: port_id, pkt: pid });
                if d.lost() {
                    return answer;
                }
            }
        }
        if d.lost() {
            cx.schedule.at(d.at, Event::WireLoss { port: port_id });
        } else {
            let port = self.fabric.port(port_id);
            cx.schedule.arrival(d.at + port.delay, port.peer, pid, port.reverse());
        }
        answer
    }

    /// A data packet finished serialisation on lazy host NIC `port_id`: the NIC lets go of it, and its
    /// sender may send more (for the host stack).
    pub(crate) fn left_nic(&mut self, cx: &mut Cx, port_id: PortId, pid: u32) -> LeftHost {
        let p = cx.pkts.get(pid);
        let left = LeftHost { kind: p.kind, flow: p.flow, wire: p.wire_bytes };
        self.pop_departed(cx.pkts, port_id, cx.now);
        left
    }

    /// [`Network::enqueue`] on an event-driven port (a host NIC if `NIC`).
    fn enqueue_driven<const NIC: bool>(&mut self, cx: &mut Cx, port_id: PortId, pid: u32) -> Enqueued {
        let now = cx.now;
        let port = &mut self.fabric.ports[port_id.index()];
        debug_assert_eq!(NIC, self.fabric.facts.is_host(port.owner));
        let p = cx.pkts.get_mut(pid);
        let Some(was_ce) = port.admit(now, pid, p) else {
            let wire = p.wire_bytes;
            cx.pkts.discard(pid, wire);
            return Enqueued::REFUSED;
        };
        let owner = port.owner;
        if !NIC {
            let st = &mut self.switches[self.fabric.facts.switch_of(owner).index()];
            if st.hooks.enqueue {
                with_switch(st, &self.fabric, &mut cx.schedule, &mut self.alarms, now, |lb, sx| lb.on_enqueue(sx, &mut MarkablePacket::new(p), port_id));
            }
        }
        let port = &mut self.fabric.ports[port_id.index()];
        port.count_mark(was_ce, p.ecn.ce);
        match self.serve(cx, port_id) {
            Some(l) => Enqueued::leaves(l),
            None => Enqueued::QUEUED,
        }
    }

    /// Starts serialising event-driven port `port_id`'s next packet if the port is idle. On a host NIC that
    /// is when the packet leaves its host: the answer, for the host stack to stamp.
    pub(crate) fn serve(&mut self, cx: &mut Cx, port_id: PortId) -> Option<Leaving> {
        let port = &mut self.fabric.ports[port_id.index()];
        let nic = port.role == PortRole::HostUp;
        let (pid, done) = port.start_service(cx.now, cx.pkts)?;
        cx.schedule.at(done, Event::TxDone { port: port_id });
        nic.then_some(Leaving { pid, at: cx.now })
    }

    /// The head packet of event-driven `port_id` has been serialised: it propagates to the peer. On a host
    /// NIC, the packet that left (its sender may send more). The caller then starts the next packet
    /// ([`Network::serve`]), after the host stack has had its say.
    pub(crate) fn tx_done(&mut self, cx: &mut Cx, port_id: PortId) -> Option<LeftHost> {
        let now = cx.now;
        let port = &mut self.fabric.ports[port_id.index()];
        let pid = port.finish_service(now, cx.pkts);
        let (owner, peer, delay, role, slot) = (port.owner, port.peer, port.delay, port.role, port.slot);
        let lost = port.loses_on_wire();
        let p = cx.pkts.get_mut(pid);
        let left = LeftHost { kind: p.kind, flow: p.flow, wire: p.wire_bytes };
        let facts = &self.fabric.facts;
        let nic = facts.is_host(owner);
        if !nic {
            if role == PortRole::LeafUp && p.kind == PacketKind::Data && facts.leaf_of_host(p.src) == facts.leaf_at(owner) {
                self.uplink_bytes[p.flow.index() * self.uplinks + slot as usize] += p.payload as u64;
            }
            let st = &mut self.switches[facts.switch_of(owner).index()];
            if st.hooks.departure {
                with_switch(st, &self.fabric, &mut cx.schedule, &mut self.alarms, now, |lb, sx| lb.on_departure(sx, &mut PacketMut::new(p), port_id));
            }
        }
        if lost {
            cx.pkts.discard(pid, left.wire);
        } else {
            let via = self.fabric.reverse_port(port_id);
            cx.schedule.at(now + delay, Event::Arrive { node: peer, pkt: pid, via });
        }
        nic.then_some(left)
    }

    /// A packet arrives at a switch through its port `via` ([`PortId::NONE`]: made here): the balancer sees
    /// it, routing offers candidates, the balancer decides. Both hooks see `via` as [`SwitchCx::ingress`].
    pub(crate) fn switch_receive(&mut self, cx: &mut Cx, node: NodeId, pid: u32, via: PortId) {
        let now = cx.now;
        let st = &mut self.switches[self.fabric.facts.switch_of(node).index()];
        let p = cx.pkts.get_mut(pid);
        p.hops = p.hops.saturating_add(1);
        let ingress = (via != PortId::NONE).then_some(via);
        if st.hooks.arrival {
            with_switch(st, &self.fabric, &mut cx.schedule, &mut self.alarms, now, |lb, sx| {
                sx.ingress = ingress;
                lb.on_arrival(sx, &mut PacketMut::new(p))
            });
        }
        let dst_leaf = self.fabric.facts.leaf_of_host(p.dst);
        let down;
        let candidates: &[PortId] = match st.info.place() {
            SwitchPlace::Leaf(leaf) if dst_leaf == leaf => {
                down = self.fabric.leaf_down_port(p.dst);
                std::slice::from_ref(&down)
            }
            SwitchPlace::Leaf(leaf) => self.fabric.leaf_candidates(leaf, dst_leaf),
            SwitchPlace::Spine(spine) => self.fabric.spine_candidates(spine, dst_leaf),
        };
        let decision = match candidates.len() {
            0 => {
                st.routing_drops += 1;
                let wire = p.wire_bytes;
                cx.pkts.discard(pid, wire);
                return;
            }
            1 if !st.hooks.choose_single => Decision::Forward(candidates[0]),
            n => {
                st.decisions += (n > 1) as u64;
                with_switch(st, &self.fabric, &mut cx.schedule, &mut self.alarms, now, |lb, sx| {
                    sx.ingress = ingress;
                    lb.choose(sx, &mut PacketMut::new(p), candidates)
                })
            }
        };
        match decision {
            Decision::Forward(port) => {
                debug_assert!(candidates.contains(&port), "balancer chose port {port} outside its candidates");
                self.enqueue(cx, port, pid);
            }
            Decision::Drop(_) => {
                st.balancer_drops += 1;
                let wire = p.wire_bytes;
                cx.pkts.discard(pid, wire);
            }
            Decision::Cancel(_) => {
                st.balancer_cancels += 1;
                let (kind, flow, src, dst, wire) = (p.kind, p.flow, p.src, p.dst, p.wire_bytes);
                cx.pkts.discard(pid, wire);
                if matches!(kind, PacketKind::Data | PacketKind::Udp) {
                    // The notice starts at this switch and travels back to the source like any packet (a UDP
                    // source stops too: its next tick finds the flow ended).
                    let mut c = Packet::new(PacketKind::Cancel, flow, dst, src);
                    c.wire_bytes = self.cancel_bytes;
                    c.sent_at = now;
                    let cid = cx.pkts.make(c);
                    cx.schedule.at(now, Event::Arrive { node, pkt: cid, via: PortId::NONE });
                }
            }
        }
    }

    pub(crate) fn switch_timer(&mut self, cx: &mut Cx, node: NodeId) {
        let sw = self.fabric.facts.switch_of(node);
        let now = cx.now;
        let period = with_switch(&mut self.switches[sw.index()], &self.fabric, &mut cx.schedule, &mut self.alarms, now, |lb, sx| {
            lb.on_timer(sx);
            lb.timer_period()
        });
        if let Some(p) = period.filter(|p| *p > Time::ZERO) {
            cx.schedule.at(now + p, Event::SwitchTimer { node });
        }
    }

    pub(crate) fn switch_alarm(&mut self, cx: &mut Cx, node: NodeId, token: u32) {
        let sw = self.fabric.facts.switch_of(node);
        with_switch(&mut self.switches[sw.index()], &self.fabric, &mut cx.schedule, &mut self.alarms, cx.now, |lb, sx| lb.on_alarm(sx, token));
    }

    /// Bytes the network holds: queues, ports, balancer state.
    pub(crate) fn engine_bytes(&self) -> usize {
        let queues: usize = self.fabric.ports.iter().map(|p| p.queue_capacity_bytes() + std::mem::size_of_val(p)).sum();
        let lbs: usize = self.switches.iter().map(|s| s.lb.state_bytes()).sum();
        queues + lbs + self.uplink_bytes.capacity() * 8
    }
}
