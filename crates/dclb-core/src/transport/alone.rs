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
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Hop {
    pub rate: Rate,
    pub delay: Time,
}

/// A chain of FIFO links, each remembering when it is next free.
struct Chain<'a> {
    hops: &'a [Hop],
    free: Vec<Time>,
    /// Each link's serialisation time of the last packet size sent (nearly every packet of a flow is full
    /// size, every ACK the same size: a division per link and packet saved).
    tx_of: u64,
    tx: Vec<Time>,
}

impl<'a> Chain<'a> {
    fn new(hops: &'a [Hop]) -> Chain<'a> {
        Chain { hops, free: vec![Time::ZERO; hops.len()], tx_of: u64::MAX, tx: vec![Time::ZERO; hops.len()] }
    }

    /// Sends `wire` bytes entering the first link at `at`; returns (when it leaves the first link, when it
    /// reaches the far end).
    fn send(&mut self, at: Time, wire: u64) -> (Time, Time) {
        if wire != self.tx_of {
            self.tx_of = wire;
            for (tx, h) in self.tx.iter_mut().zip(self.hops) {
                *tx = h.rate.tx_time(Bytes(wire));
            }
        }
        let mut t = at;
        let mut first_done = at;
        for (i, h) in self.hops.iter().enumerate() {
            let done = t.max(self.free[i]) + self.tx[i];
            self.free[i] = done;
            if i == 0 {
                first_done = done;
            }
            t = done + h.delay;
        }
        (first_done, t)
    }

    /// Sends `count` packets of `wire` bytes, all ready at `at`, back to back; returns when the last reaches the
    /// far end, and leaves each link free when the last has left it, as `count` calls of [`Chain::send`] would,
    /// in a number of steps that does not grow with `count`.
    ///
    /// Packet `j`'s departure from a link is the larger of its arrival plus the link's serialisation time `s`
    /// and the previous packet's departure plus `s`. Feeding a link a departure sequence that is the maximum
    /// of lines `a + j·b` gives one that is again such a maximum: the line `free + s + j·s` (the link busy
    /// with what it held, then serving without a gap) and, for each input line, `a + d + s + j·max(b, s)` (the
    /// input's pace, or the link's own when it is slower). So each link's departures are at most a handful of
    /// lines, and the last packet's times are read off them.
    fn send_back_to_back(&mut self, at: Time, count: u64, wire: u64) -> Time {
        if count == 0 {
            return Time::ZERO;
        }
        if wire != self.tx_of {
            self.tx_of = wire;
            for (tx, h) in self.tx.iter_mut().zip(self.hops) {
                *tx = h.rate.tx_time(Bytes(wire));
            }
        }
        let last = count - 1;
        let at_last = |lines: &[(Time, Time)]| lines.iter().map(|&(a, b)| a + b.mul(last)).max().expect("a line");
        let mut lines: Vec<(Time, Time)> = Vec::with_capacity(self.hops.len() + 1);
        let mut arrive = at;
        for (i, h) in self.hops.iter().enumerate() {
            let s = self.tx[i];
            let mut next: Vec<(Time, Time)> = if i == 0 {
                vec![(at.max(self.free[0]) + s, s)]
            } else {
                let d = self.hops[i - 1].delay;
                lines.iter().map(|&(a, b)| (a + d + s, b.max(s))).collect()
            };
            if i > 0 {
                next.push((self.free[i] + s, s));
            }
            lines = next;
            self.free[i] = at_last(&lines);
            arrive = self.free[i] + h.delay;
        }
        arrive
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
    alone_fct_with(size, data, acks, p, true)
}

fn alone_fct_with(size: u64, data: &[Hop], acks: &[Hop], p: &AloneParams, shortcut: bool) -> Time {
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
    // The window that keeps the slowest link busy: a round trip of one data packet and its ACK, in the
    // slowest link's packet times, plus the NIC's allowance and two packets of margin.
    let full = tcp.mss + tcp.header as u64;
    let round_trip = data.iter().map(|h| h.delay + h.rate.tx_time(Bytes(full))).chain(acks.iter().map(|h| h.delay + h.rate.tx_time(Bytes(tcp.ack_bytes as u64)))).fold(Time::ZERO, |a, b| a + b);
    let slowest = data.iter().map(|h| h.rate.tx_time(Bytes(full))).max().unwrap_or(Time(1)).max(Time(1));
    let nic_packets = if p.nic_limit == u64::MAX { 0 } else { p.nic_limit.div_ceil(full) };
    let steady_window = (round_trip.0.div_ceil(slowest.0) + nic_packets + 2).saturating_mul(tcp.mss);
    let mut fast = false;
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
        // Once the window can keep the slowest link busy for a whole round trip it never holds the sender back
        // again (alone, the window never shrinks): the rest of the flow enters the NIC back to back, and the
        // slowest link sends it on without a gap. Only the links' timing is left to work out.
        if shortcut && !fast && tx.cwnd >= steady_window && tx.snd_nxt == tx.high_tx {
            fast = true;
        }
        if fast {
            let rest = size - tx.snd_nxt;
            let (full, tail) = (rest / tcp.mss, rest % tcp.mss);
            last_in = last_in.max(fwd.send_back_to_back(now, full, tcp.mss + tcp.header as u64));
            if tail > 0 {
                last_in = last_in.max(fwd.send(now, tail + tcp.header as u64).1);
            }
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

    /// The whole flow through the sender, without the steady-state shortcut.
    fn exact(size: u64, data: &[Hop], acks: &[Hop], p: &AloneParams) -> Time {
        alone_fct_with(size, data, acks, p, false)
    }

    #[test]
    fn the_steady_state_shortcut_changes_no_result() {
        let sizes = [1_000u64, 14_600, 50_000, 100_000, 333_333, 1_000_000, 4_000_000];
        let fast_host = [Hop { rate: Rate::from_gbps(40.0), delay: Time::from_us(1) }, Hop { rate: Rate::from_gbps(10.0), delay: Time::from_us(5) }, Hop { rate: Rate::from_gbps(10.0), delay: Time::from_us(5) }, Hop { rate: Rate::from_gbps(40.0), delay: Time::from_us(1) }];
        let paths = [hops(4, 10.0, 1), hops(4, 10.0, 25), hops(2, 1.0, 25), fast_host.to_vec()];
        for path in &paths {
            for iw in [2, 10] {
                for hs in [false, true] {
                    let p = params(iw, hs);
                    for &size in &sizes {
                        assert_eq!(alone_fct(size, path, path, &p), exact(size, path, path, &p), "size {size} iw {iw} handshake {hs} path {path:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn back_to_back_in_closed_form_is_packet_by_packet() {
        // Links of every order of speed, some already busy: the closed form agrees with one send per packet,
        // on the last arrival and on when each link is next free.
        let g = |x: f64| Rate::from_gbps(x);
        let path = [Hop { rate: g(40.0), delay: Time::from_us(1) }, Hop { rate: g(10.0), delay: Time::from_ns(700) }, Hop { rate: g(25.0), delay: Time::from_us(3) }, Hop { rate: g(2.0), delay: Time::from_us(1) }, Hop { rate: g(100.0), delay: Time::ZERO }];
        for busy in [[0u64, 0, 0, 0, 0], [5, 0, 9, 0, 0], [0, 30, 0, 2, 40], [1, 2, 3, 4, 5]] {
            for count in [1u64, 2, 3, 7, 50, 301] {
                let start = Time::from_us(2);
                let (mut a, mut b) = (Chain::new(&path), Chain::new(&path));
                for (i, us) in busy.iter().enumerate() {
                    a.free[i] = Time::from_us(*us);
                    b.free[i] = Time::from_us(*us);
                }
                let mut last = Time::ZERO;
                for _ in 0..count {
                    last = a.send(start, 1500).1;
                }
                assert_eq!(b.send_back_to_back(start, count, 1500), last, "busy {busy:?} count {count}");
                assert_eq!(a.free, b.free, "busy {busy:?} count {count}");
            }
        }
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
