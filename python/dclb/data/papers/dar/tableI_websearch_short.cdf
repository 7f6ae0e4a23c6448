# tableI_websearch.cdf (DAR's Table I web-search row, read as a CDF; see that file) conditioned on size <= 100,000 B.
# 0.62 of the flows are in this part; mean 7419.4 B; share of the row's bytes in this part: 0.002875 (the paper's
# "about 62% ... as short flows", L114, is the share of flows, not of bytes). A Poisson source of this part at load
# rho x share and one of tableI_websearch_long.cdf at rho x (1 - share) are the thinning of one source of the row.
# format: <size_bytes> <cumulative_probability>
0 0
10000 0.951612903
100000 1
