// Package promtext keeps counters, histograms and gauges and writes them
// in the Prometheus text exposition format (version 0.0.4).
//
// It is written here rather than taken from a metrics library on purpose:
// the libraries of the field read /proc and cgroup files in their package
// initialisation (github.com/VictoriaMetrics/metrics) or register
// collectors at init (the Prometheus client), costs every start of the
// binary would pay, --version and stdio clients included, for a feature
// few deployments turn on. The format is small and stable; this package
// writes only what the server needs. docs/DEPLOYMENT.md has the figures.
package promtext
