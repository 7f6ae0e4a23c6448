//! The host stack's own queue: TCP small queues bound what a flow keeps in its NIC and wake the sender as
//! its packets leave.
//!
//! Each test fails without its feature: with no NIC budget (`host_queue_limit_bytes = 0`, the old
//! behaviour) a lone sender's window grows into its own NIC, hundreds of packets deep.

mod common;
use common::*;
use dclb_core::config::TransportKind;
use dclb_core::metrics::Results;

const TX_1500_AT_10G_US: f64 = 1.2;

/// Port index of host `h`'s NIC.
fn nic(r: &Results, h: u64) -> usize {
    let (roles, nodes) = (r.ports.strs("role"), r.ports.u64s("node"));
    (0..roles.len()).find(|&i| roles[i] == "host_up" && nodes[i] == h).unwrap()
}

/// Two 5 MB flows from host 0 (leaf 0) to hosts 2 and 3 (leaf 1): host 0's NIC is their bottleneck.
fn two_bulk_flows() -> dclb_core::Config {
    let mut cfg = fabric(2, 2, 2);
    cfg.sources = vec![listed(&[(0.0, 0, 2, 5_000_000), (0.0, 0, 3, 5_000_000)], TransportKind::Dctcp)];
    cfg
}

#[test]
fn a_sender_keeps_at_most_its_limit_in_its_own_nic_and_still_fills_it() {
    let r = run(&two_bulk_flows());
    let p = nic(&r, 0);
    // The default limit is two full-size packets per flow.
    assert!(r.ports.u64s("peak_queue_bytes")[p] <= 2 * 3000, "NIC peak {} B", r.ports.u64s("peak_queue_bytes")[p]);
    // The NIC holds at most four packets, two per flow: a packet waits for the three ahead of it at most
    // (the fabric behind the NIC runs at the same rate, so nothing queues there).
    let packets = sum(&r, "packets_sent") as f64;
    let per_packet = r.flows.f64s("queueing_delay_us").iter().sum::<f64>() / packets;
    assert!(per_packet <= 3.0 * TX_1500_AT_10G_US + 0.01, "each packet waited {per_packet:.2} µs on average");
    // The NIC never idles while the senders have data: 10 MB at 10 Gbps (plus headers) takes about 8.2 ms.
    let finish = r.flows.opt_f64s("finish_us").iter().map(|f| f.unwrap()).fold(0.0, f64::max);
    let line_rate = 2.0 * 5_000_000.0 / 1460.0 * TX_1500_AT_10G_US;
    assert!(finish < 1.02 * line_rate + 50.0, "both flows done at {finish:.0} µs; line rate allows {line_rate:.0} µs");

    let mut unlimited = two_bulk_flows();
    unlimited.transport.host_queue_limit_bytes = Some(0);
    let r = run(&unlimited);
    assert!(r.ports.u64s("peak_queue_packets")[nic(&r, 0)] > 100, "without a limit the windows grow into the NIC");
}
