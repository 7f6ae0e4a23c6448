# tableI_websearch.cdf (DAR's Table I web-search row, read as a CDF; see that file) conditioned on size > 100,000 B.
# 0.38 of the flows are in this part; mean 4198421.1 B.
# format: <size_bytes> <cumulative_probability>
100000 0
1000000 0.473684211
13964000 1
