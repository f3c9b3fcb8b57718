// Package remotewrite decodes Prometheus remote-write (protocol v1)
// requests into points, and encodes them for load generators and tests.
// It is the pure-parser layer of the daemon's remote-write receiver: a
// request body in, points out, no I/O.
//
// # Glossary
//
//   - body: the HTTP request body, a WriteRequest protobuf compressed
//     with snappy's block format (not its framed stream format).
//   - WriteRequest, TimeSeries, Label, Sample: the messages of
//     Prometheus' prompb/remote.proto and prompb/types.proto (below),
//     decoded by hand with protowire, without generated code. Metadata,
//     exemplars and fields unknown to this package are skipped; native
//     histograms are skipped and counted as ignored.
//   - series: a TimeSeries. Its __name__ label is the point name, its
//     other labels the point tags; each sample is one point. Names and
//     labels must also pass Graphite 1.1's tag rules (see
//     ingest.GraphiteTagBytes), since the render API names the series
//     "name;k=v": ";!^=" in a label name, ';' in a name or value, or a
//     value starting with '~' refuses the series. A label "name", which
//     Graphite reserves for the metric name, is kept as "name_"
//     (ingest.NameTag); a series with both is refused.
//   - snappy bomb: a small body announcing a huge decompressed size. The
//     size is read from the snappy header and checked against
//     MaxDecodedBytes, and against the most snappy can expand the body,
//     before any buffer is allocated.
//
// # Messages
//
//	message WriteRequest {
//	  repeated TimeSeries timeseries = 1;
//	  reserved 2;
//	  repeated MetricMetadata metadata = 3;
//	}
//	message TimeSeries {
//	  repeated Label labels = 1;
//	  repeated Sample samples = 2;
//	  repeated Exemplar exemplars = 3;
//	  repeated Histogram histograms = 4;
//	}
//	message Label  { string name = 1; string value = 2; }
//	message Sample { double value = 1; int64 timestamp = 2; } // milliseconds
package remotewrite
