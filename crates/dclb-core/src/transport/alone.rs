//! The FCT of a flow alone on the fabric: the best any load balancer could give it.
//!
//! A load balancer can remove queueing behind other flows, reordering and losses; it cannot remove the
//! flow's own propagation, serialisation, handshake and slow start. This module computes what is left: the
//! flow sent over its best path with nothing else in the network, by the engine's own TCP sender
//! ([`TcpSender`], so slow start, window validation and the initial window are exactly the engine's), with
//! each link a FIFO server and the receiver acknowledging every packet.
//!
//! ```text
//!  sender ──fill_window──► NIC ─► hop 1 ─► ... ─► receiver: last byte in = the alone FCT
//!    ▲   (TCP small queues: woken when its own packet leaves the NIC)     │ one ACK per packet
//!    └──────────────── ACK path (hops in reverse) ◄───────────────────────┘
//! ```
//!
//! A link serves packets in order: a packet starts serialisation when it has fully arrived and the link is
//! free (store and forward), and reaches the next node after the link's delay. Alone, a flow's data and its
//! ACKs never meet another packet, so this is what the engine itself would do with the flow alone, except
//! for ECN: a flow that queues behind itself at a slower link is never marked here (DCTCP would keep that
//! link busy at the same rate anyway), so the result is a lower bound in that case and exact otherwise
//! (`tests/alone.rs` checks it against the engine).
//!
//! It differs from the flow table's `ideal_fct_us` (the fabric's `ideal_fct`), which assumes an unbounded
//! window: that ideal is what slowdown divides by, as the papers define slowdown; this one is what a
//! reproduction uses to bound the reduction any load balancer could achieve (its headroom).

use super::tcp::{Segment, TcpSender};
use super::TcpParams;
use crate::transport::sack::SackOption;
use crate::units::{Bytes, Rate, Time};

/// One link of a path: its rate and one-way propagation delay.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Hop {
    pub rate: Rate,
    pub delay: Time,
}

/// A chain of FIFO links, each remembering when it is next free.
struct Chain<'a> {
    hops: &'a [Hop],
    free: Vec<Time>,
}

impl<'a> Chain<'a> {
    fn new(hops: &'a [Hop]) -> Chain<'a> {
        Chain { hops, free: vec![Time::ZERO; hops.len()] }
    }

    /// Sends `wire` bytes entering the first link at `at`; returns (when it leaves the first link, when it
    /// reaches the far end).
    fn send(&mut self, at: Time, wire: u64) -> (Time, Time) {
        let mut t = at;
        let mut first_done = at;
        for (i, h) in self.hops.iter().enumerate() {
            let start = t.max(self.free[i]);
            let done = start + h.rate.tx_time(Bytes(wire));
            self.free[i] = done;
            if i == 0 {
                first_done = done;
            }
            t = done + h.delay;
        }
        (first_done, t)
    }
}

/// What shapes the flow besides its path: the transport and the host's limit on its NIC queue.
#[derive(Clone, Debug)]
pub struct AloneParams {
    pub tcp: TcpParams,
    /// DCTCP (the sender's alpha machinery runs; no marks ever arrive).
    pub dctcp: bool,
    /// SYN and SYN-ACK before data.
    pub handshake: bool,
    /// Most wire bytes of the flow's data in its NIC (TCP small queues); `u64::MAX`: no limit.
    pub nic_limit: u64,
}

/// The FCT of `size` payload bytes sent alone over `data` (first hop: the sender's NIC), acknowledged over
/// `acks` (first hop: the receiver's NIC): from the flow's start to its last byte at the receiver.
pub fn alone_fct(size: u64, data: &[Hop], acks: &[Hop], p: &AloneParams) -> Time {
    let tcp = &p.tcp;
    let mut fwd = Chain::new(data);
    let mut rev = Chain::new(acks);
    // The handshake: a SYN out and a SYN-ACK back, ACK-sized, before the first data.
    let open = if p.handshake {
        let (_, syn_in) = fwd.send(Time::ZERO, tcp.ack_bytes as u64);
        rev.send(syn_in, tcp.ack_bytes as u64).1
    } else {
        Time::ZERO
    };
    let mut tx = TcpSender::new(size, p.dctcp, tcp);
    // Pending sender events, each stream in time order: ACK arrivals (ack number, time), and the NIC
    // finishing one of the flow's packets (wire bytes freed, time).
    let mut acks_due: std::collections::VecDeque<(u64, Time)> = Default::default();
    let mut nic_done: std::collections::VecDeque<(u64, Time)> = Default::default();
    let mut in_nic = 0u64;
    let mut segs: Vec<Segment> = Vec::new();
    let mut last_in = open;
    let mut rcv_nxt = 0u64;
    let mut now = open;
    tx.nic_budget = p.nic_limit;
    tx.fill_window(now, tcp, &mut segs);
    loop {
        // Put on the wire what the sender released at `now`.
        for s in segs.drain(..) {
            let wire = s.len as u64 + tcp.header as u64;
            let (left_nic, arrived) = fwd.send(now, wire);
            in_nic += wire;
            nic_done.push_back((wire, left_nic));
            // Alone and on one path, data arrives in order: each packet advances the cumulative ACK.
            rcv_nxt = rcv_nxt.max(s.seq + s.len as u64);
            last_in = last_in.max(arrived);
            let (_, ack_at) = rev.send(arrived, tcp.ack_bytes as u64);
            acks_due.push_back((rcv_nxt, ack_at));
        }
        if rcv_nxt >= size {
            return last_in;
        }
        // The next event: an ACK, or one of the flow's packets leaving the NIC (which frees budget). At a
        // tie the NIC goes first, as its departure was scheduled when the packet was admitted. As the host
        // does, the sender is granted what is left of its NIC budget before anything that may send.
        let next_ack = acks_due.front().map(|a| a.1);
        let next_nic = nic_done.front().map(|n| n.1);
        let ack_first = match (next_ack, next_nic) {
            (Some(a), Some(n)) => a < n,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => unreachable!("alone: nothing in flight at {now:?} with {rcv_nxt} of {size} bytes delivered"),
        };
        if ack_first {
            let (ack, at) = acks_due.pop_front().expect("an ACK");
            now = at;
            tx.nic_budget = p.nic_limit.saturating_sub(in_nic);
            tx.on_ack(now, ack, false, Time::ZERO, &SackOption::default(), tcp, &mut segs);
        } else {
            let (wire, at) = nic_done.pop_front().expect("a NIC departure");
            now = at;
            in_nic -= wire;
            tx.nic_budget = p.nic_limit.saturating_sub(in_nic);
            tx.fill_window(now, tcp, &mut segs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TransportConfig;

    fn hops(n: usize, gbps: f64, delay_us: u64) -> Vec<Hop> {
        vec![Hop { rate: Rate::from_gbps(gbps), delay: Time::from_us(delay_us) }; n]
    }

    fn params(iw: u32, handshake: bool) -> AloneParams {
        let mut c = TransportConfig::default();
        c.init_cwnd_packets = iw;
        AloneParams { tcp: TcpParams::from_config(&c), dctcp: true, handshake, nic_limit: 2 * 1500 }
    }

    #[test]
    fn a_flow_within_the_initial_window_takes_one_pipelined_pass() {
        // 10 packets of 1500 wire bytes over 4 links of 10 Gbps and 1 us: the first packet's store and forward
        // (4 x (1.2 + 1) us) and the other nine behind it at 1.2 us each.
        let p = params(10, false);
        let t = alone_fct(10 * 1460, &hops(4, 10.0, 1), &hops(4, 10.0, 1), &p);
        let want = 4.0 * (1.2 + 1.0) + 9.0 * 1.2;
        assert!((t.as_us() - want).abs() < 1e-6, "{} vs {want}", t.as_us());
    }

    #[test]
    fn slow_start_costs_round_trips_on_a_long_path() {
        // 100 us links: a 100 KB flow needs several round trips with an initial window of 2, fewer with 10,
        // and a handshake adds one more.
        let path = hops(4, 10.0, 25);
        let two = alone_fct(100_000, &path, &path, &params(2, false)).as_us();
        let ten = alone_fct(100_000, &path, &path, &params(10, false)).as_us();
        let ten_hs = alone_fct(100_000, &path, &path, &params(10, true)).as_us();
        let rtt = 200.0;
        assert!(two > ten + rtt, "IW 2 {two} vs IW 10 {ten}");
        assert!((ten_hs - ten - rtt).abs() < 2.0, "handshake {ten_hs} vs {ten}");
        // With an unbounded window 100 KB would take one pass: 4 x 25 us and 69 packets x 1.2 us, 183 us. With
        // an initial window of 10 it goes in three rounds (10, 20, 40 packets): two round trips, then the pass.
        assert!(ten > 2.0 * rtt + 100.0 && ten < 3.0 * rtt, "{ten}");
    }
}
