# websearch.cdf (dclb's shipped workload) conditioned on size > 100,000 B, for the DAR reproduction.
# Linear interpolation as the engine samples; the split point 100,000 B has F = 0.541667 in websearch.cdf.
# 0.458333 of websearch's flows are in this part; mean 3695454.5 B (the whole CDF's mean 1711250.0 B);
# share of websearch's bytes in the short part: 0.010226. A Poisson source of this part at load rho x share
# (short) or rho x (1 - share) (long) is the thinning of one websearch source at load rho (python/dclb/reproduce/papers/dar.py).
# format: <size_bytes> <cumulative_probability>
100000 0
200000 0.127272727
1000000 0.345454545
2000000 0.563636364
5000000 0.781818182
10000000 0.934545455
30000000 1
