# Short flows of TAM's microbenchmarks (Figs. 3, 4, 6-9): the shipped data-mining CDF (datamining.cdf, VL2 as in
# the pFabric-style ns-2 file) restricted to flows of at most 100 KB and renormalised. The paper gives no size for
# its "short flows" (only "< 100 KB", L29); dclb's notes (§7.2, [G]) draw them from data mining, as the
# same group's TR motivation does (tr.txt L35).
# datamining.cdf: 10,000 B at 0.8, 152,522 B at 0.8346; linear interpolation puts 100,000 B at 0.821849, so
# 10,000 B -> 0.8 / 0.821849 = 0.973415. Mean (linear interpolation) 6,378 B.
# format: <size_bytes> <cumulative_probability>
100 0
10000 0.973415
100000 1
