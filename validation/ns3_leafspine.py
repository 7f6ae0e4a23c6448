"""The validation scenario in ns-3 3.44 (PyPI `ns3` wheel): same fabric, flows, DCTCP and paths as dclb.

Runs every flow of validation/flows.csv on a 4 leaves x 4 spines x 8 hosts leaf-spine (10 Gbps, 1 us links) with
ns-3's own TCP (TcpDctcp) and writes one row per flow (times in ns) plus a summary JSON next to it. Not part of
the test suite; it takes 3.5-15 minutes on one core (depending on the machine's load) and about 750 MB. See
docs/validation.md for every setting and why; validation/run_all.sh runs every variant.

    python validation/ns3_leafspine.py --paths validation/paths_ecmp.csv --out validation/results/ns3_ecmp.csv
    python validation/ns3_leafspine.py --paths dmodk --out validation/results/ns3_dmodk.csv
    python validation/ns3_leafspine.py --paths validation/paths_ecmp.csv --bytes --out validation/results/ns3_ecmp_bytes.csv

Switch queues count packets (RED in packet mode; dclb's topology.queue_unit = "packets", validation/scenario.toml)
or, with --bytes, bytes (RED's MaxSize, MinTh and MaxTh in bytes; dclb's default queue_unit = "bytes",
validation/scenario_defaults.toml). In both, the queue disc holds neither the packet on the wire nor the one in the
point-to-point device's 1-packet queue, which dclb's buffer and K count: 2 packets, or 2 x 1,500 B, are taken off.

Diagnostic options, each removing one cause of difference from dclb: --dctcp-floor (DCTCP's window reduction
floored at two segments, as in Linux and dclb), --preconnect-us (connections opened early, data handed to TCP at
the flow's start, as in dclb), --buffer (switch queue disc size), --sample-hosts-us (host NIC queue lengths),
--sample-queues-us (every port's queue in bytes, summarised per port).

Paths. ns-3 has no per-flow ECMP (its global routing either sprays every packet or takes the first route), so each
flow is pinned to a spine for its data and a spine for its ACKs. Every host has one address per spine ("plane"):
host h's address on plane p is 10.(p+1).leaf.(h mod 8 + 1). Leaves route plane p's remote addresses up to spine p,
spine p routes them down to their leaf. A flow connects to the destination's address on its data plane from the
source's address on its ACK plane, so its data and SYN cross the data spine and its ACKs and SYN-ACK the ACK
spine. `--paths FILE` takes (data_spine, ack_spine) per flow id, e.g. the paths dclb's ECMP took
(validation/dclb_paths.py); `--paths dmodk` uses data spine = dst mod S and ACK spine = src mod S.

Measurements, all in the C++ helper below (a Python callback per packet would be far too slow):
* start_ns: the flow's start in flows.csv, when the application opens the connection (SYN leaves) and hands the
  data to TCP; with --preconnect-us the connection is opened earlier (connect_ns, connected_ns);
* first_data_ns: when TCP hands the first data segment to IP (after SYN, SYN-ACK, unless preconnected);
* finish_ns: when the receiving socket has all bytes in order (arrival of the last byte).
fct_app = finish - start includes the handshake; fct_data = finish - first_data is what dclb measures.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

HELPER = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace dclbval {
using namespace ns3;

struct FlowRec {
    uint32_t src = 0, dst = 0, dataPlane = 0, ackPlane = 0;
    uint64_t size = 0;
    int64_t startNs = 0, firstDataNs = -1, finishNs = -1;
    int64_t connectNs = 0, connectedNs = -1;  // SYN sent, handshake done (--preconnect-us opens it early)
    bool dataDue = false, dataSent = false;
    uint64_t rx = 0, dataPackets = 0, retx = 0, timeouts = 0;
    uint64_t rtoFromCwr = 0, rtoFromRecovery = 0, rtoFromOpen = 0, recoveries = 0, cwrs = 0, synTx = 0;
    uint64_t rtoSubMss = 0, rtoIdle = 0;   // timeouts with cwnd below one MSS / with nothing in flight
    uint32_t cwnd = 0, inFlight = 0, minCwnd = UINT32_MAX;
    uint32_t highSeq = 0;  // highest data byte sent (relative sequence), to spot retransmissions
    uint32_t isn = 0;
    bool isnSet = false;
    Ptr<Socket> sender, listener, receiver;
};

struct Counters {
    uint64_t markData = 0, markCtl = 0;          // ECN marks (all data: only data is ECN-capable)
    uint64_t overflowData = 0, overflowCtl = 0;  // buffer full
    uint64_t forcedData = 0, forcedCtl = 0;      // RED "forced drop": at or above K and not ECN-capable
    uint64_t otherData = 0, otherCtl = 0;
};

// Diagnostic variant (--dctcp-floor): DCTCP whose window reduction never goes below 2 segments, as in Linux
// (dctcp_ssthresh) and dclb. Stock TcpDctcp returns (1 - alpha/2) cwnd with no floor.
class TcpDctcpFloor : public TcpDctcp {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("ns3::DclbValidationTcpDctcpFloor")
                                .SetParent<TcpDctcp>()
                                .SetGroupName("Internet")
                                .AddConstructor<TcpDctcpFloor>();
        return tid;
    }
    TcpDctcpFloor() : TcpDctcp() {}
    TcpDctcpFloor(const TcpDctcpFloor& other) : TcpDctcp(other) {}
    std::string GetName() const override { return "TcpDctcpFloor"; }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<TcpDctcpFloor>(this); }
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override {
        return std::max(TcpDctcp::GetSsThresh(tcb, bytesInFlight), 2 * tcb->m_segmentSize);
    }
};

static std::vector<FlowRec> g_flows;
static std::vector<Ptr<QueueDisc>> g_hostQ;           // each host's NIC queue disc, for --sample-hosts-us
static std::vector<uint64_t> g_sampleT, g_sampleQ;    // (time ns, packets) per host per sample
static int64_t g_sampleNs = 0;

void SampleHosts() {
    for (uint32_t h = 0; h < g_hostQ.size(); h++) {
        g_sampleT.push_back(Simulator::Now().GetNanoSeconds());
        g_sampleQ.push_back(g_hostQ[h]->GetNPackets());
    }
    Simulator::Schedule(NanoSeconds(g_sampleNs), &SampleHosts);
}

void StartSampling(int64_t ns) {
    g_sampleNs = ns;
    Simulator::Schedule(NanoSeconds(0), &SampleHosts);
}
// --sample-queues-us: every port's queue in bytes (queue disc + the device's 1-packet queue, IP bytes; not the
// packet on the wire, which dclb counts) at a fixed interval. Roles: 0 host_up, 1 leaf_down, 2 leaf_up, 3 spine_down.
struct PortQ {
    Ptr<QueueDisc> qd;
    Ptr<Queue<Packet>> dev;
    uint32_t role, index;
};
static std::vector<PortQ> g_ports;
static std::vector<std::vector<uint32_t>> g_portSamples;
static int64_t g_qSampleNs = 0;

void RegisterPort(Ptr<NetDevice> d, Ptr<QueueDisc> q, uint32_t role, uint32_t index) {
    g_ports.push_back({q, DynamicCast<PointToPointNetDevice>(d)->GetQueue(), role, index});
    g_portSamples.emplace_back();
}

void SampleQueues() {
    for (size_t i = 0; i < g_ports.size(); i++) {
        const PortQ& p = g_ports[i];
        // The device queue holds framed packets: take the 2-byte PPP header off each.
        g_portSamples[i].push_back(p.qd->GetNBytes() + p.dev->GetNBytes() - 2 * p.dev->GetNPackets());
    }
    Simulator::Schedule(NanoSeconds(g_qSampleNs), &SampleQueues);
}

void StartQueueSampling(int64_t ns) {
    g_qSampleNs = ns;
    Simulator::Schedule(NanoSeconds(0), &SampleQueues);
}
uint32_t NPorts() { return g_ports.size(); }
uint32_t PortRole(uint32_t i) { return g_ports[i].role; }
uint32_t PortIndex(uint32_t i) { return g_ports[i].index; }
const std::vector<uint32_t>& PortSamples(uint32_t i) { return g_portSamples[i]; }

uint64_t NSamples() { return g_sampleT.size(); }
uint64_t SampleT(uint64_t i) { return g_sampleT[i]; }
uint64_t SampleQ(uint64_t i) { return g_sampleQ[i]; }
static uint64_t g_done = 0;
static Counters g_sw, g_host;
static NodeContainer g_hosts, g_leaves, g_spines;
static uint32_t g_hpl = 8, g_nLeaves = 4, g_nSpines = 4;

Ipv4Address HostAddr(uint32_t h, uint32_t plane) {
    uint32_t leaf = h / g_hpl, i = h % g_hpl;
    return Ipv4Address((10u << 24) | ((plane + 1) << 16) | (leaf << 8) | (i + 1));
}

void OnQdiscDrop(Counters* c, Ptr<const QueueDiscItem> item, const char* reason) {
    bool data = item->GetSize() > 100;
    if (std::strcmp(reason, RedQueueDisc::FORCED_DROP) == 0) {
        (data ? c->forcedData : c->forcedCtl)++;
    } else if (std::strcmp(reason, QueueDisc::INTERNAL_QUEUE_DROP) == 0) {
        (data ? c->overflowData : c->overflowCtl)++;
    } else {
        (data ? c->otherData : c->otherCtl)++;
    }
}

void OnQdiscMark(Counters* c, Ptr<const QueueDiscItem> item, const char* reason) {
    (item->GetSize() > 100 ? c->markData : c->markCtl)++;
}

bool WatchQdisc(Ptr<QueueDisc> q, bool isSwitch) {
    Counters* c = isSwitch ? &g_sw : &g_host;
    bool ok = q->TraceConnectWithoutContext("DropBeforeEnqueue", MakeBoundCallback(&OnQdiscDrop, c));
    ok = ok && q->TraceConnectWithoutContext("Mark", MakeBoundCallback(&OnQdiscMark, c));
    return ok;
}

void OnTx(uint32_t id, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s) {
    FlowRec& f = g_flows[id];
    if (h.GetFlags() & TcpHeader::SYN) {
        f.isn = h.GetSequenceNumber().GetValue();
        f.isnSet = true;
        f.synTx++;
        return;
    }
    uint32_t len = p->GetSize();
    if (len == 0) {
        return;
    }
    f.dataPackets++;
    if (f.firstDataNs < 0) {
        f.firstDataNs = Simulator::Now().GetNanoSeconds();
    }
    uint32_t rel = h.GetSequenceNumber().GetValue() - f.isn;  // 1 = first data byte
    uint32_t end = rel + len;
    if (end <= f.highSeq) {
        f.retx++;
    } else {
        f.highSeq = end;
    }
}

void OnCongState(uint32_t id, TcpSocketState::TcpCongState_t oldState, TcpSocketState::TcpCongState_t newState) {
    FlowRec& f = g_flows[id];
    if (newState == TcpSocketState::CA_LOSS && oldState != TcpSocketState::CA_LOSS) {
        f.timeouts++;
        f.rtoSubMss += f.cwnd < 1460;
        f.rtoIdle += f.inFlight == 0;
        if (oldState == TcpSocketState::CA_CWR) {
            f.rtoFromCwr++;
        } else if (oldState == TcpSocketState::CA_RECOVERY) {
            f.rtoFromRecovery++;
        } else {
            f.rtoFromOpen++;  // CA_OPEN or CA_DISORDER
        }
    } else if (newState == TcpSocketState::CA_RECOVERY && oldState != TcpSocketState::CA_RECOVERY) {
        f.recoveries++;
    } else if (newState == TcpSocketState::CA_CWR && oldState != TcpSocketState::CA_CWR) {
        f.cwrs++;
    }
}

void OnCwnd(uint32_t id, uint32_t oldValue, uint32_t newValue) {
    FlowRec& f = g_flows[id];
    f.cwnd = newValue;
    if (newValue < f.minCwnd) {
        f.minCwnd = newValue;
    }
}

void OnInFlight(uint32_t id, uint32_t oldValue, uint32_t newValue) {
    g_flows[id].inFlight = newValue;
}

void OnRecv(uint32_t id, Ptr<Socket> s) {
    FlowRec& f = g_flows[id];
    Ptr<Packet> p;
    while ((p = s->Recv())) {
        f.rx += p->GetSize();
    }
    if (f.finishNs < 0 && f.rx >= f.size) {
        f.finishNs = Simulator::Now().GetNanoSeconds();
        g_done++;
        if (g_done == g_flows.size()) {
            Simulator::Stop();
        }
    }
}

void OnAccept(uint32_t id, Ptr<Socket> s, const Address& from) {
    g_flows[id].receiver = s;
    s->SetRecvCallback(MakeBoundCallback(&OnRecv, id));
}

void SendAll(uint32_t id) {
    FlowRec& f = g_flows[id];
    f.dataSent = true;
    int sent = f.sender->Send(Create<Packet>(f.size));  // the send buffer holds any flow: one write
    NS_ABORT_MSG_IF(sent != (int)f.size, "flow " << id << ": send buffer refused the flow");
}

// The application hands the flow to TCP at its start time; without --preconnect-us the connection is opened
// at that same instant, so the data waits for the handshake.
void DataDue(uint32_t id) {
    FlowRec& f = g_flows[id];
    f.dataDue = true;
    if (f.connectedNs >= 0 && !f.dataSent) {
        SendAll(id);
    }
}

void OnConnected(uint32_t id, Ptr<Socket> s) {
    FlowRec& f = g_flows[id];
    f.connectedNs = Simulator::Now().GetNanoSeconds();
    if (f.dataDue && !f.dataSent) {
        SendAll(id);
    }
}

void OnConnectFailed(uint32_t id, Ptr<Socket> s) {
    NS_FATAL_ERROR("flow " << id << ": connection failed");
}

void StartFlow(uint32_t id) {
    FlowRec& f = g_flows[id];
    Ptr<Socket> s = Socket::CreateSocket(g_hosts.Get(f.src), TcpSocketFactory::GetTypeId());
    s->Bind(InetSocketAddress(HostAddr(f.src, f.ackPlane), 0));
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, id));
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, id));
    s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, id));
    s->TraceConnectWithoutContext("BytesInFlight", MakeBoundCallback(&OnInFlight, id));
    s->SetConnectCallback(MakeBoundCallback(&OnConnected, id), MakeBoundCallback(&OnConnectFailed, id));
    s->Connect(InetSocketAddress(HostAddr(f.dst, f.dataPlane), 1000 + id));
    f.sender = s;
}

void AddFlow(uint32_t src, uint32_t dst, uint64_t size, int64_t startNs, uint32_t dataPlane, uint32_t ackPlane,
             int64_t connectNs) {
    uint32_t id = g_flows.size();
    FlowRec f;
    f.src = src; f.dst = dst; f.size = size; f.startNs = startNs; f.dataPlane = dataPlane; f.ackPlane = ackPlane;
    f.connectNs = connectNs;
    g_flows.push_back(f);
    // The receiver listens on its own port from time 0 (a listening socket sends nothing).
    Ptr<Socket> l = Socket::CreateSocket(g_hosts.Get(dst), TcpSocketFactory::GetTypeId());
    l->Bind(InetSocketAddress(Ipv4Address::GetAny(), 1000 + id));
    l->Listen();
    l->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(), MakeBoundCallback(&OnAccept, id));
    g_flows[id].listener = l;
    Simulator::Schedule(NanoSeconds(connectNs), &StartFlow, id);
    Simulator::Schedule(NanoSeconds(startNs), &DataDue, id);
}

uint32_t AddIf(Ptr<Node> n, Ptr<NetDevice> d, Ipv4Address a) {
    Ptr<Ipv4> ip = n->GetObject<Ipv4>();
    int32_t i = ip->AddInterface(d);
    ip->AddAddress(i, Ipv4InterfaceAddress(a, Ipv4Mask("255.255.255.255")));
    ip->SetUp(i);
    return i;
}

// Builds the fabric; returns false if a trace could not be connected.
// kSw and bufSw are the switch queue disc's RED threshold and size, in packets or (bytes = true) in bytes.
bool Build(uint32_t leaves, uint32_t spines, uint32_t hpl, uint64_t linkBps, double delayUs, uint32_t kSw,
           uint32_t bufSw, uint32_t nicPkts, bool bytes) {
    g_nLeaves = leaves; g_nSpines = spines; g_hpl = hpl;
    g_hosts.Create(leaves * hpl);
    g_leaves.Create(leaves);
    g_spines.Create(spines);
    InternetStackHelper stack;
    Ipv4StaticRoutingHelper srh;
    stack.SetRoutingHelper(srh);
    stack.Install(g_hosts);
    stack.Install(g_leaves);
    stack.Install(g_spines);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(linkBps)));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds((int64_t)(delayUs * 1000))));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("1p")));

    TrafficControlHelper tcHost;
    tcHost.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize",
                            QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, nicPkts)));
    TrafficControlHelper tcSw;
    tcSw.SetRootQueueDisc("ns3::RedQueueDisc",
                          "MaxSize", QueueSizeValue(QueueSize(bytes ? QueueSizeUnit::BYTES : QueueSizeUnit::PACKETS,
                                                              bufSw)),
                          "MinTh", DoubleValue(kSw), "MaxTh", DoubleValue(kSw), "QW", DoubleValue(1.0),
                          "Gentle", BooleanValue(false), "UseEcn", BooleanValue(true),
                          "UseHardDrop", BooleanValue(false), "MeanPktSize", UintegerValue(1500),
                          "LinkBandwidth", DataRateValue(DataRate(linkBps)),
                          "LinkDelay", TimeValue(NanoSeconds((int64_t)(delayUs * 1000))));

    bool ok = true;
    std::vector<std::vector<uint32_t>> leafHostIf(leaves, std::vector<uint32_t>(hpl));
    std::vector<std::vector<uint32_t>> leafUpIf(leaves, std::vector<uint32_t>(spines));
    std::vector<std::vector<uint32_t>> spineDownIf(spines, std::vector<uint32_t>(leaves));
    uint32_t sw = 0;
    auto swAddr = [&]() { sw++; return Ipv4Address((172u << 24) | (16u << 16) | sw); };

    for (uint32_t h = 0; h < leaves * hpl; h++) {
        uint32_t l = h / hpl;
        NetDeviceContainer d = p2p.Install(g_hosts.Get(h), g_leaves.Get(l));
        QueueDiscContainer qh = tcHost.Install(d.Get(0));
        QueueDiscContainer ql = tcSw.Install(d.Get(1));
        ok = ok && WatchQdisc(qh.Get(0), false) && WatchQdisc(ql.Get(0), true);
        g_hostQ.push_back(qh.Get(0));
        RegisterPort(d.Get(0), qh.Get(0), 0, h);
        RegisterPort(d.Get(1), ql.Get(0), 1, h);
        Ptr<Ipv4> ip = g_hosts.Get(h)->GetObject<Ipv4>();
        int32_t i = ip->AddInterface(d.Get(0));
        for (uint32_t p = 0; p < spines; p++) {
            ip->AddAddress(i, Ipv4InterfaceAddress(HostAddr(h, p), Ipv4Mask("255.255.255.255")));
        }
        ip->SetUp(i);
        srh.GetStaticRouting(ip)->AddNetworkRouteTo(Ipv4Address("0.0.0.0"), Ipv4Mask("0.0.0.0"), i);
        leafHostIf[l][h % hpl] = AddIf(g_leaves.Get(l), d.Get(1), swAddr());
    }
    for (uint32_t l = 0; l < leaves; l++) {
        for (uint32_t s = 0; s < spines; s++) {
            NetDeviceContainer d = p2p.Install(g_leaves.Get(l), g_spines.Get(s));
            QueueDiscContainer q = tcSw.Install(d);
            ok = ok && WatchQdisc(q.Get(0), true) && WatchQdisc(q.Get(1), true);
            RegisterPort(d.Get(0), q.Get(0), 2, l * spines + s);
            RegisterPort(d.Get(1), q.Get(1), 3, s * leaves + l);
            leafUpIf[l][s] = AddIf(g_leaves.Get(l), d.Get(0), swAddr());
            spineDownIf[s][l] = AddIf(g_spines.Get(s), d.Get(1), swAddr());
        }
    }
    for (uint32_t l = 0; l < leaves; l++) {
        Ptr<Ipv4StaticRouting> r = srh.GetStaticRouting(g_leaves.Get(l)->GetObject<Ipv4>());
        for (uint32_t p = 0; p < spines; p++) {
            for (uint32_t m = 0; m < leaves; m++) {
                if (m == l) {
                    for (uint32_t i = 0; i < hpl; i++) {
                        r->AddHostRouteTo(HostAddr(l * hpl + i, p), leafHostIf[l][i]);
                    }
                } else {
                    Ipv4Address net((10u << 24) | ((p + 1) << 16) | (m << 8));
                    r->AddNetworkRouteTo(net, Ipv4Mask("255.255.255.0"), leafUpIf[l][p]);
                }
            }
        }
    }
    for (uint32_t s = 0; s < spines; s++) {
        Ptr<Ipv4StaticRouting> r = srh.GetStaticRouting(g_spines.Get(s)->GetObject<Ipv4>());
        for (uint32_t m = 0; m < leaves; m++) {
            Ipv4Address net((10u << 24) | ((s + 1) << 16) | (m << 8));
            r->AddNetworkRouteTo(net, Ipv4Mask("255.255.255.0"), spineDownIf[s][m]);
        }
    }
    return ok;
}

uint64_t Done() { return g_done; }
uint64_t NFlows() { return g_flows.size(); }
const FlowRec& Flow(uint32_t i) { return g_flows[i]; }
const Counters& SwitchCounters() { return g_sw; }
const Counters& HostCounters() { return g_host; }
}  // namespace dclbval
"""


def read_flows(path: Path) -> list[tuple[int, int, int, int]]:
    """(start_ns, src, dst, size) per flow, in file (= flow id) order."""
    out = []
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            whole, _, frac = row["start_us"].partition(".")
            start_ns = int(whole) * 1000 + int((frac + "000")[:3])
            out.append((start_ns, int(row["src"]), int(row["dst"]), int(row["size_bytes"])))
    return out


def read_paths(spec: str, flows, spines: int) -> list[tuple[int, int]]:
    if spec == "dmodk":
        return [(dst % spines, src % spines) for _, src, dst, _ in flows]
    with open(spec, newline="") as fh:
        rows = {int(r["flow_id"]): (int(r["data_spine"]), int(r["ack_spine"])) for r in csv.DictReader(fh)}
    if sorted(rows) != list(range(len(flows))):
        raise SystemExit(f"{spec}: needs one row per flow id 0..{len(flows) - 1}")
    return [rows[i] for i in range(len(flows))]


def main() -> int:
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flows", default=str(here / "flows.csv"))
    ap.add_argument("--paths", required=True, help="CSV flow_id,data_spine,ack_spine, or 'dmodk'")
    ap.add_argument("--out", required=True, help="per-flow CSV; a .json summary is written next to it")
    ap.add_argument("--leaves", type=int, default=4)
    ap.add_argument("--spines", type=int, default=4)
    ap.add_argument("--hosts-per-leaf", type=int, default=8)
    ap.add_argument("--bytes", action="store_true",
                    help="switch queue discs count bytes (RED MaxSize, MinTh and MaxTh in bytes), like dclb's "
                         "default topology.queue_unit = 'bytes'; without it they count packets")
    ap.add_argument("--k", type=int, default=None,
                    help="RED step threshold of the queue disc, in packets (default 63 = dclb's K of 65 packets, "
                         "which counts the packet on the wire and the one in the 1-packet device queue) or with "
                         "--bytes in bytes (default 94,500 = dclb's 97,500 B less two 1,500 B data packets)")
    ap.add_argument("--buffer", type=int, default=None,
                    help="queue disc size, in packets (default 254; + 2 = dclb's 256) or with --bytes in bytes "
                         "(default 381,000; + 2 x 1,500 = dclb's 384,000)")
    ap.add_argument("--nic", type=int, default=9998, help="host queue disc packets; + 2 = dclb's 10,000")
    ap.add_argument("--min-rto-us", type=float, default=5000)
    ap.add_argument("--dctcp-floor", action="store_true",
                    help="diagnostic: DCTCP with a 2-segment floor on its window reduction (Linux's and dclb's)")
    ap.add_argument("--preconnect-us", type=float, default=0,
                    help="diagnostic: open each connection this long before the flow's start and hand the data to "
                         "TCP at the start, so that the handshake is (usually) over and FCT starts with the data, "
                         "as in dclb")
    ap.add_argument("--sample-hosts-us", type=float, default=0,
                    help="diagnostic: write every host's NIC queue length (packets) at this interval to OUT.hostq.csv")
    ap.add_argument("--sample-queues-us", type=float, default=0,
                    help="diagnostic: sample every port's queue (bytes, queue disc + device queue) at this interval "
                         "and write per-port mean / p50 / p99 / max to OUT.queues.csv")
    ap.add_argument("--chunk-ms", type=float, default=10, help="simulated time between progress lines")
    args = ap.parse_args()
    if args.k is None:
        args.k = 94_500 if args.bytes else 63
    if args.buffer is None:
        args.buffer = 381_000 if args.bytes else 254

    flows = read_flows(Path(args.flows))
    paths = read_paths(args.paths, flows, args.spines)

    t0 = time.perf_counter()
    from ns import ns

    cppyy = ns.cppyy
    t_import = time.perf_counter() - t0

    # Payload rate: ns-3's point-to-point frame adds a 2-byte PPP header to the 1500-byte IP packet, so the
    # link runs at 10 Gbps x 1502/1500 to serialise a full data packet in exactly dclb's 1.2 us.
    link_bps = 10_013_333_333

    cppyy.cppdef(HELPER)
    v = cppyy.gbl.dclbval
    cc = v.TcpDctcpFloor.GetTypeId() if args.dctcp_floor else ns.TypeId.LookupByName("ns3::TcpDctcp")

    d = ns.Config.SetDefault
    d("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(cc))
    d("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpClassicRecovery")))
    d("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1460))
    d("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    d("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
    d("ns3::TcpSocket::SndBufSize", ns.UintegerValue(64 * 1024 * 1024))
    d("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(64 * 1024 * 1024))
    d("ns3::TcpSocket::ConnTimeout", ns.TimeValue(ns.MicroSeconds(int(args.min_rto_us))))
    d("ns3::TcpSocket::DataRetries", ns.UintegerValue(1000))
    d("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MicroSeconds(int(args.min_rto_us))))
    d("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.NanoSeconds(0)))
    d("ns3::TcpSocketBase::Sack", ns.BooleanValue(False))
    d("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    d("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(False))
    d("ns3::TcpDctcp::DctcpShiftG", ns.DoubleValue(1.0 / 16))
    d("ns3::TcpDctcp::DctcpAlphaOnInit", ns.DoubleValue(1.0))

    if not v.Build(args.leaves, args.spines, args.hosts_per_leaf, link_bps, 1.0, args.k, args.buffer, args.nic,
                   args.bytes):
        raise SystemExit("could not connect the queue-disc traces")
    for (start_ns, src, dst, size), (dsp, asp) in zip(flows, paths):
        v.AddFlow(src, dst, size, start_ns, dsp, asp, max(0, start_ns - round(args.preconnect_us * 1000)))

    if args.sample_hosts_us > 0:
        v.StartSampling(int(args.sample_hosts_us * 1000))
    if args.sample_queues_us > 0:
        v.StartQueueSampling(int(args.sample_queues_us * 1000))
    t_build = time.perf_counter() - t0
    chunk = args.chunk_ms
    now_ms = 0.0
    sim = ns.Simulator
    while v.Done() < v.NFlows():
        now_ms += chunk
        sim.Stop(ns.MicroSeconds(int(chunk * 1000)))
        sim.Run()
        if v.Done() < v.NFlows() and sim.Now().GetMicroSeconds() < round(now_ms * 1000):
            break  # no events left before the stop time: the remaining flows can never finish
        print(f"  sim {sim.Now().GetMicroSeconds() / 1000:8.1f} ms  flows done {v.Done()}/{v.NFlows()}  "
              f"events {sim.GetEventCount():,}  wall {time.perf_counter() - t0:6.0f} s", file=sys.stderr, flush=True)
    wall = time.perf_counter() - t0
    events = int(sim.GetEventCount())
    sim_us = sim.Now().GetMicroSeconds()

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["flow_id", "src", "dst", "size_bytes", "data_spine", "ack_spine", "start_ns", "first_data_ns",
                    "finish_ns", "data_packets", "retransmissions", "timeouts", "timeouts_in_cwr",
                    "timeouts_in_recovery", "timeouts_in_open", "fast_recoveries", "cwr_entries", "syn_sent",
                    "timeouts_cwnd_below_mss", "timeouts_nothing_in_flight", "min_cwnd_bytes",
                    "connect_ns", "connected_ns"])
        for i in range(int(v.NFlows())):
            f = v.Flow(i)
            w.writerow([i, f.src, f.dst, f.size, f.dataPlane, f.ackPlane, f.startNs, f.firstDataNs, f.finishNs,
                        f.dataPackets, f.retx, f.timeouts, f.rtoFromCwr, f.rtoFromRecovery, f.rtoFromOpen,
                        f.recoveries, f.cwrs, f.synTx, f.rtoSubMss, f.rtoIdle, f.minCwnd,
                        f.connectNs, f.connectedNs])
    if args.sample_hosts_us > 0:
        hosts = args.leaves * args.hosts_per_leaf
        with open(out.with_suffix(".hostq.csv"), "w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(["time_ns", "host", "queue_disc_packets"])
            for i in range(int(v.NSamples())):
                w.writerow([int(v.SampleT(i)), i % hosts, int(v.SampleQ(i))])
    if args.sample_queues_us > 0:
        roles = ("host_up", "leaf_down", "leaf_up", "spine_down")

        def quantile(xs: list[int], q: float) -> float:  # numpy's default (linear); the ns-3 venv has no numpy
            pos = q * (len(xs) - 1)
            lo = int(pos)
            return xs[lo] + (xs[min(lo + 1, len(xs) - 1)] - xs[lo]) * (pos - lo)

        with open(out.with_suffix(".queues.csv"), "w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(["role", "index", "samples", "mean_bytes", "p50_bytes", "p99_bytes", "max_bytes"])
            for i in range(int(v.NPorts())):
                x = sorted(int(b) for b in v.PortSamples(i))
                w.writerow([roles[int(v.PortRole(i))], int(v.PortIndex(i)), len(x), round(sum(x) / len(x), 1),
                            quantile(x, 0.5), quantile(x, 0.99), x[-1]])
    sw, host = v.SwitchCounters(), v.HostCounters()
    counters = lambda c: {k: int(getattr(c, k)) for k in  # noqa: E731
                          ("markData", "markCtl", "overflowData", "overflowCtl", "forcedData", "forcedCtl",
                           "otherData", "otherCtl")}
    summary = {
        "ns3_version": ns.Version.ShortVersion() if hasattr(ns, "Version") else "3.44",
        "paths": args.paths if args.paths == "dmodk" else Path(args.paths).name,
        "preconnect_us": args.preconnect_us,
        "late_connections": sum(int(v.Flow(i).connectedNs > v.Flow(i).startNs) for i in range(int(v.NFlows()))),
        "congestion_control": "TcpDctcp with a 2-segment floor (diagnostic)" if args.dctcp_floor else "TcpDctcp",
        "flows": int(v.NFlows()), "completed": int(v.Done()),
        "queue_unit": "bytes" if args.bytes else "packets",
        **({"k_queue_disc_bytes": args.k, "buffer_queue_disc_bytes": args.buffer} if args.bytes else
           {"k_queue_disc_packets": args.k, "buffer_queue_disc_packets": args.buffer}),
        "nic_queue_disc_packets": args.nic, "link_bps": link_bps,
        **({"sample_queues_us": args.sample_queues_us} if args.sample_queues_us > 0 else {}),
        "switch_queues": counters(sw), "host_queues": counters(host),
        "events": events, "sim_time_us": sim_us, "wall_s": round(wall, 1), "import_s": round(t_import, 1),
        "build_s": round(t_build, 1), "events_per_s": round(events / max(wall - t_build, 1e-9)),
    }
    out.with_suffix(".json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary), file=sys.stderr)
    return 0 if v.Done() == v.NFlows() else 1


if __name__ == "__main__":
    raise SystemExit(main())
