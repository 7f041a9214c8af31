// Package metricschart draws a metrics history
// ([proxmoxsafe.MetricsHistoryResult]) as a PNG line chart a person would
// rather look at than read: CPU and memory as a percentage of their
// capacity for a node or a guest, usage of capacity for a storage, over
// time, with a title naming what and when.
//
// It draws with github.com/go-analyze/charts (docs/METRICS.md says why
// that library and what it costs). Nothing the server initializes at
// start imports this package's drawing until a chart is asked for: the
// library's package initialization costs about 0.3 ms, its font is parsed
// on first use.
package metricschart
