package remotewrite

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/pgts/pgts/internal/ingest"
)

// The field numbers of prompb's remote.proto and types.proto.
const (
	fieldWriteRequestTimeseries protowire.Number = 1 // repeated TimeSeries
	fieldTimeSeriesLabels       protowire.Number = 1 // repeated Label
	fieldTimeSeriesSamples      protowire.Number = 2 // repeated Sample
	fieldTimeSeriesHistograms   protowire.Number = 4 // repeated Histogram
	fieldLabelName              protowire.Number = 1 // string
	fieldLabelValue             protowire.Number = 2 // string
	fieldSampleValue            protowire.Number = 1 // double
	fieldSampleTimestamp        protowire.Number = 2 // int64, milliseconds
)

// Sample is one sample of a Series, as on the wire.
type Sample struct {
	Value float64
	// Time is milliseconds since the Unix epoch.
	Time int64
}

// Series is one time series of a write request.
type Series struct {
	// Labels are encoded in order, the metric name as the label
	// "__name__". Prometheus sends them sorted by name.
	Labels  []ingest.Tag
	Samples []Sample
}

// AppendWriteRequest appends the protobuf encoding of a WriteRequest
// holding series to dst, uncompressed; remote-write senders compress it
// with snappy's block format (snappy.Encode) before sending. Fields
// holding their zero value are left out, as proto3 encoders do.
func AppendWriteRequest(dst []byte, series []Series) []byte {
	for _, s := range series {
		dst = protowire.AppendTag(dst, fieldWriteRequestTimeseries, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(seriesSize(s)))
		for _, l := range s.Labels {
			dst = protowire.AppendTag(dst, fieldTimeSeriesLabels, protowire.BytesType)
			dst = protowire.AppendVarint(dst, uint64(labelSize(l)))
			if l.Key != "" {
				dst = protowire.AppendTag(dst, fieldLabelName, protowire.BytesType)
				dst = protowire.AppendString(dst, l.Key)
			}
			if l.Value != "" {
				dst = protowire.AppendTag(dst, fieldLabelValue, protowire.BytesType)
				dst = protowire.AppendString(dst, l.Value)
			}
		}
		for _, x := range s.Samples {
			dst = protowire.AppendTag(dst, fieldTimeSeriesSamples, protowire.BytesType)
			dst = protowire.AppendVarint(dst, uint64(sampleSize(x)))
			if bits := math.Float64bits(x.Value); bits != 0 {
				dst = protowire.AppendTag(dst, fieldSampleValue, protowire.Fixed64Type)
				dst = protowire.AppendFixed64(dst, bits)
			}
			if x.Time != 0 {
				dst = protowire.AppendTag(dst, fieldSampleTimestamp, protowire.VarintType)
				dst = protowire.AppendVarint(dst, uint64(x.Time))
			}
		}
	}
	return dst
}

// seriesSize returns the encoded size of a TimeSeries message.
func seriesSize(s Series) int {
	n := 0
	for _, l := range s.Labels {
		n += protowire.SizeTag(fieldTimeSeriesLabels) + protowire.SizeBytes(labelSize(l))
	}
	for _, x := range s.Samples {
		n += protowire.SizeTag(fieldTimeSeriesSamples) + protowire.SizeBytes(sampleSize(x))
	}
	return n
}

func labelSize(l ingest.Tag) int {
	n := 0
	if l.Key != "" {
		n += protowire.SizeTag(fieldLabelName) + protowire.SizeBytes(len(l.Key))
	}
	if l.Value != "" {
		n += protowire.SizeTag(fieldLabelValue) + protowire.SizeBytes(len(l.Value))
	}
	return n
}

func sampleSize(x Sample) int {
	n := 0
	if math.Float64bits(x.Value) != 0 {
		n += protowire.SizeTag(fieldSampleValue) + protowire.SizeFixed64()
	}
	if x.Time != 0 {
		n += protowire.SizeTag(fieldSampleTimestamp) + protowire.SizeVarint(uint64(x.Time))
	}
	return n
}
