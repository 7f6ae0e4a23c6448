#!/bin/sh
# Reruns the whole ns-3 validation (docs/validation.md); not part of the test suite.
# DCLB_PY: a Python with dclb installed (pip install -e .); NS3_PY: a Python with the PyPI ns3 wheel
# (pip install 'ns3==3.44.post0'). Each ns-3 run takes 5-40 minutes on one core and about 750 MB; they run
# one after another. Run from the repository root.
set -e
DCLB_PY=${DCLB_PY:-python}
NS3_PY=${NS3_PY:-python}
R=validation/results
P=validation/paths_ecmp.csv

"$DCLB_PY" validation/make_flows.py        # validation/flows.csv (committed; reproduced byte for byte)
"$DCLB_PY" validation/dclb_paths.py        # validation/paths_ecmp.csv (committed; idem)

# The comparison proper: stock ns-3 TcpDctcp, the scenario's 256-packet buffers, dclb's ECMP paths.
"$NS3_PY" validation/ns3_leafspine.py --paths $P --out $R/ns3_ecmp.csv
# The same flows on other paths (data spine = dst mod 4, ACK spine = src mod 4): how much paths alone matter.
"$NS3_PY" validation/ns3_leafspine.py --paths dmodk --out $R/ns3_dmodk.csv
# Diagnostics, each removing one cause of difference (docs/validation.md, "Differences").
"$NS3_PY" validation/ns3_leafspine.py --paths $P --dctcp-floor --out $R/ns3_ecmp_floor.csv
"$NS3_PY" validation/ns3_leafspine.py --paths $P --preconnect-us 10000 --out $R/ns3_ecmp_preconnected.csv
"$NS3_PY" validation/ns3_leafspine.py --paths $P --dctcp-floor --preconnect-us 10000 \
    --out $R/ns3_ecmp_floor_preconnected.csv
"$NS3_PY" validation/ns3_leafspine.py --paths $P --buffer 998 --out $R/ns3_ecmp_buffer1000.csv
"$NS3_PY" validation/ns3_leafspine.py --paths $P --buffer 998 --dctcp-floor --out $R/ns3_ecmp_buffer1000_floor.csv
"$NS3_PY" validation/ns3_leafspine.py --paths $P --buffer 998 --dctcp-floor --preconnect-us 10000 \
    --out $R/ns3_ecmp_buffer1000_floor_preconnected.csv
# Under dclb's current defaults (docs/validation.md, "Under the current defaults"): byte-counted switch queues in
# ns-3 (RED MaxSize 381,000 B, MinTh = MaxTh = 94,500 B: dclb's 384,000 B and 97,500 B less the device queue's
# and the wire's packets), against validation/scenario_defaults.toml.
# --sample-queues-us adds sampling events only; the flows come out identical (ns3_ecmp_bytes.queues.csv: queues per port).
"$NS3_PY" validation/ns3_leafspine.py --paths $P --bytes --sample-queues-us 100 --out $R/ns3_ecmp_bytes.csv

"$DCLB_PY" validation/compare.py > $R/comparison.md   # runs dclb in each configuration (seconds each)
