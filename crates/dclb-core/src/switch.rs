//! The switch side of the simulation: routing a packet through a switch's balancer, ports admitting and
//! serving packets, and the one place a balancer's context is built.
//!
//! ```text
//!  Arrive at a switch ─► on_arrival ─► candidates from routing ─┬─ none: routing drop
//!                                                               ├─ one (and the balancer does not ask
//!                                                               │  to see single choices): forwarded
//!                                                               └─ choose ─► Forward(port) ─► enqueue
//!                                                                          ─► Drop / Cancel (counted apart)
//!  enqueue: port admits (drop-tail, DCTCP mark) ─► on_enqueue (may re-mark) ─► start serving if idle
//!  TxDone:  port finishes serving ─► uplink accounting, on_departure ─► Arrive at the peer after the delay
//!           ─► next packet starts serving
//! ```
//!
//! The same handling serves hosts' NIC ports (a host has no switch balancer, so no hooks run there), with
//! two calls into the host stack: when a packet starts serialisation on a NIC it leaves its host
//! (`leaving_host`: departure timestamp, edge path choice), and when it has been serialised its sender
//! may send more (`left_nic`: TCP small queues).

use crate::fabric::Fabric;
use crate::lb::{Alarms, Decision, Hooks, MarkablePacket, PacketMut, PortsView, SwitchBalancer, SwitchCx, SwitchInfo, SwitchKind};
use crate::packet::{Packet, PacketKind};
use crate::port::PortRole;
use crate::rng::Rng;
use crate::sched::{Event, Scheduler};
use crate::sim::Simulation;
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

/// Runs `hook` on a switch's balancer with its context, then schedules the one-shot alarms it asked for.
/// Every balancer call goes through here: the one place a [`SwitchCx`] is built.
#[inline]
pub(crate) fn with_switch<R>(st: &mut SwitchState, fabric: &Fabric, sched: &mut Scheduler, alarms: &mut Alarms, now: Time, hook: impl FnOnce(&mut dyn SwitchBalancer, &mut SwitchCx) -> R) -> R {
    let n = &fabric.nodes[st.info.node as usize];
    debug_assert_eq!(now, sched.now(), "balancers run at the event's time");
    let ports = PortsView::new(&fabric.ports, n.first_port, n.n_ports, now);
    let mut cx = SwitchCx { now, me: st.info, ports, facts: &fabric.facts, rng: &mut st.rng, alarms, ingress: None };
    let r = hook(&mut *st.lb, &mut cx);
    for (at, token) in alarms.drain(..) {
        sched.at(at, Event::SwitchAlarm { node: st.info.node, token });
    }
    r
}

impl Simulation {
    fn switch_index(&self, node: u32) -> usize {
        (node - self.fabric.hosts) as usize
    }

    /// Makes ports lazily drained (`on`) or event-driven (`port.rs`). Lazy: every switch port, except those
    /// of switches whose balancer has a departure hook ([`crate::lb::Hooks::departure`]); and every host NIC when no host has an edge balancer
    /// (which picks a data packet's path when it starts serialisation) and ACKs do not take priority (a
    /// second class breaks FIFO). Such a NIC serves one class: the probe kinds it would serve first are
    /// never sent without edge balancers. Only before the run starts (ports empty).
    pub fn set_lazy_ports(&mut self, on: bool) {
        let probes = PacketKind::Probe.bit() | PacketKind::ProbeReply.bit();
        for i in 0..self.fabric.ports.len() {
            let reverse = self.fabric.reverse_port(i as u32);
            let port = &mut self.fabric.ports[i];
            let lazy = if port.owner >= self.fabric.hosts {
                let st = &self.switches[(port.owner - self.fabric.hosts) as usize];
                !st.hooks.departure
            } else {
                let fifo = self.edges.is_empty() && port.control_kinds() & !probes == 0;
                if fifo && on {
                    port.set_control_kinds(0);
                }
                fifo
            };
            port.set_lazy(on && lazy, reverse);
        }
    }

    /// Pops the packets of lazy port `port_id` that have left by now: counted as sent there, and a packet
    /// the wire lost is freed and counted as dropped.
    #[inline]
    pub(crate) fn pop_departed(&mut self, port_id: u32) {
        self.pop_departed_by(port_id, self.sched.now());
    }

    /// [`Simulation::pop_departed`] by `now` (at the end of a run: by its end).
    #[inline]
    pub(crate) fn pop_departed_by(&mut self, port_id: u32, now: Time) {
        let port = &mut self.fabric.ports[port_id as usize];
        while let Some(d) = port.pop_departed(now) {
            if d.lost() {
                self.dropped += d.wire() as u64;
                self.pkts.free(d.pid);
            }
        }
    }

    /// Payload bytes per (flow, uplink) that have left their source leaf: a lazy uplink counts a packet at
    /// admission, so the packets it still holds (not departed: the caller popped the rest) are left out.
    pub(crate) fn uplink_bytes_departed(&self) -> Vec<u64> {
        let mut out = self.uplink_bytes.clone();
        let hosts = self.fabric.hosts;
        for port in self.fabric.ports.iter().filter(|p| p.is_lazy() && p.role == PortRole::LeafUp) {
            for d in port.departures() {
                let p = self.pkts.get(d.pid);
                if p.kind == PacketKind::Data && self.fabric.facts.leaf_of_host(p.src) == port.owner - hosts {
                    out[p.flow as usize * self.uplinks + port.slot as usize] -= p.payload as u64;
                }
            }
        }
        out
    }

    /// Puts packet `pid` into `port`'s queue: the port admits it (drop-tail, DCTCP marking), the owning
    /// switch's balancer sees it, and the port starts serving if it was idle (a lazy port instead pops what
    /// has left before admitting, and schedules the packet's arrival at the next hop). Whether it was
    /// admitted (a refused packet is counted as dropped and freed).
    #[inline]
    pub(crate) fn enqueue(&mut self, now: Time, port_id: u32, pid: u32) -> bool {
        if self.fabric.ports[port_id as usize].is_lazy() {
            self.enqueue_lazy(now, port_id, pid)
        } else {
            self.enqueue_driven(now, port_id, pid)
        }
    }

    /// [`Simulation::enqueue`] on a lazy port: what has left goes, the packet's departure is fixed at
    /// admission, and its arrival at the next hop is scheduled now. On a host NIC the packet leaves its
    /// host when its serialisation starts (send timestamp), and a data packet's departure wakes its sender
    /// ([`Event::LeftNic`], TCP small queues).
    fn enqueue_lazy(&mut self, now: Time, port_id: u32, pid: u32) -> bool {
        let hosts = self.fabric.hosts;
        let port = &mut self.fabric.ports[port_id as usize];
        while let Some(d) = port.pop_departed(now) {
            if d.lost() {
                self.dropped += d.wire() as u64;
                self.pkts.free(d.pid);
            }
        }
        let p = self.pkts.get_mut(pid);
        let Some((was_ce, d)) = port.admit_lazy(now, pid, p) else {
            self.dropped += p.wire_bytes as u64;
            self.pkts.free(pid);
            return false;
        };
        let owner = port.owner;
        if owner >= hosts {
            let st = &mut self.switches[(owner - hosts) as usize];
            if st.hooks.enqueue {
                with_switch(st, &self.fabric, &mut self.sched, &mut self.alarms, now, |lb, cx| lb.on_enqueue(cx, &mut MarkablePacket::new(p), port_id));
            }
            let port = &mut self.fabric.ports[port_id as usize];
            // Counted at admission; the result tables leave out what has not departed by the end.
            if port.role == PortRole::LeafUp && p.kind == PacketKind::Data && self.fabric.facts.leaf_of_host(p.src) == owner - hosts {
                self.uplink_bytes[p.flow as usize * self.uplinks + port.slot as usize] += p.payload as u64;
            }
            port.count_mark(was_ce, p.ecn.ce);
        } else {
            port.count_mark(was_ce, p.ecn.ce);
            if !matches!(p.kind, PacketKind::Ack | PacketKind::ProbeReply | PacketKind::SynAck) {
                p.sent_at = d.at - port.tx_time(p.wire_bytes);
            }
            if p.kind == PacketKind::Data {
                // Also pops the packet, lost or not: no WireLoss event of its own.
                self.sched.at(d.at, Event::LeftNic { port: port_id, pkt: pid });
                if d.lost() {
                    return true;
                }
            }
        }
        if d.lost() {
            self.sched.at(d.at, Event::WireLoss { port: port_id });
        } else {
            let port = &self.fabric.ports[port_id as usize];
            self.sched.arrival(d.at + port.delay, port.peer, pid, port.reverse());
        }
        true
    }

    /// A data packet finished serialisation on lazy host NIC `port_id`: the NIC lets go of it and its
    /// sender may send more ([`Simulation::left_nic`]).
    pub(crate) fn left_nic_event(&mut self, now: Time, port_id: u32, pid: u32) {
        let p = self.pkts.get(pid);
        let (kind, flow, wire) = (p.kind, p.flow, p.wire_bytes);
        self.pop_departed(port_id);
        self.left_nic(now, kind, flow, wire);
    }

    /// [`Simulation::enqueue`] on an event-driven port.
    fn enqueue_driven(&mut self, now: Time, port_id: u32, pid: u32) -> bool {
        let port = &mut self.fabric.ports[port_id as usize];
        let p = self.pkts.get_mut(pid);
        let Some(was_ce) = port.admit(now, pid, p) else {
            self.dropped += p.wire_bytes as u64;
            self.pkts.free(pid);
            return false;
        };
        let owner = port.owner;
        if owner >= self.fabric.hosts {
            let st = &mut self.switches[(owner - self.fabric.hosts) as usize];
            if st.hooks.enqueue {
                with_switch(st, &self.fabric, &mut self.sched, &mut self.alarms, now, |lb, cx| lb.on_enqueue(cx, &mut MarkablePacket::new(p), port_id));
            }
        }
        let port = &mut self.fabric.ports[port_id as usize];
        port.count_mark(was_ce, p.ecn.ce);
        self.serve(now, port_id);
        true
    }

    /// Starts serialising `port_id`'s next packet if the port is idle. On a host NIC that is when the
    /// packet leaves its host, and the host stamps it first ([`Simulation::leaving_host`]).
    fn serve(&mut self, now: Time, port_id: u32) {
        let port = &mut self.fabric.ports[port_id as usize];
        let nic = port.role == PortRole::HostUp;
        if let Some((pid, done)) = port.start_service(now, &mut self.pkts) {
            if nic {
                self.leaving_host(now, pid);
            }
            self.sched.at(done, Event::TxDone { port: port_id });
        }
    }

    /// The head packet of `port_id` has been serialised: it propagates to the peer, the next one starts.
    pub(crate) fn tx_done(&mut self, now: Time, port_id: u32) {
        let hosts = self.fabric.hosts;
        let port = &mut self.fabric.ports[port_id as usize];
        let pid = port.finish_service(now, &self.pkts);
        let (owner, peer, delay, role, slot) = (port.owner, port.peer, port.delay, port.role, port.slot);
        let lost = port.loses_on_wire();
        let p = self.pkts.get_mut(pid);
        let from_host = (p.kind, p.flow, p.wire_bytes);
        if owner >= hosts {
            if role == PortRole::LeafUp && p.kind == PacketKind::Data && self.fabric.facts.leaf_of_host(p.src) == owner - hosts {
                self.uplink_bytes[p.flow as usize * self.uplinks + slot as usize] += p.payload as u64;
            }
            let st = &mut self.switches[(owner - hosts) as usize];
            if st.hooks.departure {
                with_switch(st, &self.fabric, &mut self.sched, &mut self.alarms, now, |lb, cx| lb.on_departure(cx, &mut PacketMut::new(p), port_id));
            }
        }
        if lost {
            self.dropped += p.wire_bytes as u64;
            self.pkts.free(pid);
        } else {
            let via = self.fabric.reverse_port(port_id);
            self.sched.at(now + delay, Event::Arrive { node: peer, pkt: pid, via });
        }
        if owner < hosts {
            self.left_nic(now, from_host.0, from_host.1, from_host.2);
        }
        self.serve(now, port_id);
    }

    /// A packet arrives at a switch through its port `via` (`u32::MAX`: made here): the balancer sees it,
    /// routing offers candidates, the balancer decides. Both hooks see `via` as [`SwitchCx::ingress`].
    pub(crate) fn switch_receive(&mut self, now: Time, node: u32, pid: u32, via: u32) {
        let sw = self.switch_index(node);
        let st = &mut self.switches[sw];
        let p = self.pkts.get_mut(pid);
        p.hops = p.hops.saturating_add(1);
        let ingress = (via != u32::MAX).then_some(via);
        if st.hooks.arrival {
            with_switch(st, &self.fabric, &mut self.sched, &mut self.alarms, now, |lb, cx| {
                cx.ingress = ingress;
                lb.on_arrival(cx, &mut PacketMut::new(p))
            });
        }
        let dst_leaf = self.fabric.facts.leaf_of_host(p.dst);
        let down;
        let candidates: &[u32] = match st.info.kind {
            SwitchKind::Leaf if dst_leaf == st.info.index => {
                down = self.fabric.leaf_down_port(p.dst);
                std::slice::from_ref(&down)
            }
            SwitchKind::Leaf => self.fabric.leaf_candidates(st.info.index, dst_leaf),
            SwitchKind::Spine => self.fabric.spine_candidates(st.info.index, dst_leaf),
        };
        let decision = match candidates.len() {
            0 => {
                st.routing_drops += 1;
                self.dropped += p.wire_bytes as u64;
                self.pkts.free(pid);
                return;
            }
            1 if !st.hooks.choose_single => Decision::Forward(candidates[0]),
            n => {
                st.decisions += (n > 1) as u64;
                with_switch(st, &self.fabric, &mut self.sched, &mut self.alarms, now, |lb, cx| {
                    cx.ingress = ingress;
                    lb.choose(cx, &mut PacketMut::new(p), candidates)
                })
            }
        };
        match decision {
            Decision::Forward(port) => {
                debug_assert!(candidates.contains(&port), "balancer chose port {port} outside its candidates");
                self.enqueue(now, port, pid);
            }
            Decision::Drop(_) => {
                st.balancer_drops += 1;
                self.dropped += p.wire_bytes as u64;
                self.pkts.free(pid);
            }
            Decision::Cancel(_) => {
                st.balancer_cancels += 1;
                let (kind, flow, src, dst, wire) = (p.kind, p.flow, p.src, p.dst, p.wire_bytes);
                self.dropped += wire as u64;
                self.pkts.free(pid);
                if matches!(kind, PacketKind::Data | PacketKind::Udp) {
                    // The notice starts at this switch and travels back to the source like any packet (a UDP
                    // source stops too: its next tick finds the flow ended).
                    let mut c = Packet::new(PacketKind::Cancel, flow, dst, src);
                    c.wire_bytes = self.tp.ack_bytes;
                    c.sent_at = now;
                    let cid = self.new_packet(c);
                    self.sched.at(now, Event::Arrive { node, pkt: cid, via: u32::MAX });
                }
            }
        }
    }

    pub(crate) fn switch_timer(&mut self, now: Time, node: u32) {
        let sw = self.switch_index(node);
        let period = with_switch(&mut self.switches[sw], &self.fabric, &mut self.sched, &mut self.alarms, now, |lb, cx| {
            lb.on_timer(cx);
            lb.timer_period()
        });
        if let Some(p) = period.filter(|p| *p > Time::ZERO) {
            self.sched.at(now + p, Event::SwitchTimer { node });
        }
    }

    pub(crate) fn switch_alarm(&mut self, now: Time, node: u32, token: u32) {
        let sw = self.switch_index(node);
        with_switch(&mut self.switches[sw], &self.fabric, &mut self.sched, &mut self.alarms, now, |lb, cx| lb.on_alarm(cx, token));
    }
}
