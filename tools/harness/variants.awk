# The table of a tools/gpu-check section run by several builds (variants), from the harness's lines
# "INFO SECTION VARIANT SHAPE TYPE MS PART_MS HASH" in the log (tools/harness/gpu_check.c,
# time_stages), a row a shape and type: the default build's fast path and stage ms, then each other
# build's (in the order met) and its ratio to the default's (above 1: the default is faster).
# Where the fits differ: a FAIL for the uncapped build (the same sources), one INFO line for the
# baseline's (another commit's, whose fits a change since may explain).
# Variables: section (lanes, merges), only (a walk cap's suffix, e.g. cap64: the variants
# "NAME/cap64" taken as NAME, the others left out; unset: the variants with no suffix).
$1 == "INFO" && $2 == section && $3 != "steps" && NF == 8 {
  variant = $3
  if (only != "") {
    if (variant !~ ("/" only "$")) next
    sub("/" only "$", "", variant)
  } else if (variant ~ /\//) {
    next
  }
  key = $4 " | " $5
  if (!(key in seen)) { seen[key] = 1; order[++n] = key }
  if (variant != "default" && !(variant in known)) { known[variant] = 1; others[++m] = variant }
  fast[key, variant] = $6; part[key, variant] = $7; hash[key, variant] = $8
}
function ratio(a, b) { return (a + 0 > 0 && b + 0 > 0) ? sprintf("%.3g", b / a) : "-" }
function cell(v) { return v == "" ? "-" : v }
END {
  if (n == 0) exit
  stage = section == "lanes" ? "lane kernels" : "merge levels"
  head = "| " section ": shape | type | fast ms | " stage " ms |"
  rule = "|---|---|---|---|"
  for (j = 1; j <= m; j++) {
    v = others[j]
    head = head " fast ms, " v " | " v " / default | " stage " ms, " v " | " v " / default |"
    rule = rule "---|---|---|---|"
  }
  print head
  print rule
  for (k = 1; k <= n; k++) {
    key = order[k]
    row = "| " key " | " cell(fast[key, "default"]) " | " cell(part[key, "default"]) " |"
    for (j = 1; j <= m; j++) {
      v = others[j]
      row = row " " cell(fast[key, v]) " | " ratio(fast[key, "default"], fast[key, v]) " | " \
        cell(part[key, v]) " | " ratio(part[key, "default"], part[key, v]) " |"
    }
    print row
  }
  # the hashes compared as strings (hex digits alone would compare as numbers)
  differ = ""
  for (k = 1; k <= n; k++)
    for (j = 1; j <= m; j++) {
      key = order[k]; v = others[j]
      if (hash[key, "default"] == "" || hash[key, v] == "" || hash[key, "default"] "" == hash[key, v] "") continue
      if (v == "baseline") differ = differ (differ == "" ? "" : ", ") key
      else print "FAIL " section " " key ": the " v " build's fit differs from the default's"
    }
  if (differ != "") print "INFO baseline " section ": its fits differ from this build's on " differ
}
