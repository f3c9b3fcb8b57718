package render

import (
	"bytes"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestRenderImage: format=png is a PNG of the requested size, format=svg
// an SVG document; both show the series' names in the legend.
func TestRenderImage(t *testing.T) {
	h := testHandler(t, testSource())
	req := httptest.NewRequest(http.MethodGet, "/render?"+url.Values{
		"target": {"servers.web*.cpu"}, "from": {"-10min"}, "format": {"png"}, "width": {"400"}, "height": {"200"},
	}.Encode(), nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/png" {
		t.Fatalf("png: %d %s %.200s", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	img, err := png.Decode(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 400 || b.Dy() != 200 {
		t.Errorf("png is %v, want 400x200", b)
	}
	code, body := get(t, h, "/render", url.Values{"target": {"servers.web2.cpu"}, "from": {"-10min"}, "format": {"svg"}, "title": {"CPU"}})
	if code != http.StatusOK || !strings.Contains(body, "<svg") || !strings.Contains(body, "servers.web2.cpu") || !strings.Contains(body, "CPU") {
		t.Errorf("svg: %d %.300s", code, body)
	}
	code, body = get(t, h, "/render", url.Values{"target": {"no.such"}, "from": {"-10min"}, "format": {"svg"}})
	if code != http.StatusOK || !strings.Contains(body, "No Data") {
		t.Errorf("empty svg: %d %.300s", code, body)
	}
}

// TestRenderDefaultFormat: without format (or with an empty one) the
// answer is a PNG, as graphite-web's; rawData alone still asks for raw.
func TestRenderDefaultFormat(t *testing.T) {
	h := testHandler(t, testSource())
	for _, q := range []url.Values{
		{"target": {"servers.web1.cpu"}, "from": {"-10min"}},
		{"target": {"servers.web1.cpu"}, "from": {"-10min"}, "format": {""}},
	} {
		req := httptest.NewRequest(http.MethodGet, "/render?"+q.Encode(), nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/png" {
			t.Fatalf("%s: %d %s %.200s", q.Encode(), rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
		}
		if _, err := png.Decode(bytes.NewReader(rec.Body.Bytes())); err != nil {
			t.Errorf("%s: %v", q.Encode(), err)
		}
	}
	code, body := get(t, h, "/render", url.Values{"target": {"servers.web1.cpu"}, "from": {"-10min"}, "rawData": {"1"}})
	if code != http.StatusOK || !strings.HasPrefix(body, "servers.web1.cpu,") {
		t.Errorf("rawData: %d %.200s", code, body)
	}
}
