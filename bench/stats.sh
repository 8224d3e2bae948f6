# Sourced by the decoding benchmarks: the median and range of a list of figures.
# median_range VALUES...: "median (min-max)"
median_range() {
  printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {m = NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2;
    printf "%g (%g-%g)", m, v[1], v[NR]}'
}
# median VALUES...
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
