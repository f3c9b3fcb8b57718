package gen

import (
	"slices"
	"strconv"
	"sync"
)

// The vocabulary of the events payload. Every string here is valid JSON
// string content as it stands (escapes included), so the builder appends
// it without escaping.

// eventType is an event type, its share of events (per eventWeightTotal)
// and the kind of object it acts on.
type eventType struct {
	name   string
	weight uint64
	target string // target.type
	prefix string // target id prefix
}

var eventTypes = [...]eventType{
	{"user.login", 28, "session", "ses"},
	{"user.logout", 20, "session", "ses"},
	{"user.login_failed", 8, "session", "ses"},
	{"user.created", 6, "user", "usr"},
	{"user.updated", 10, "user", "usr"},
	{"user.deleted", 2, "user", "usr"},
	{"role.granted", 5, "role", "rol"},
	{"role.revoked", 3, "role", "rol"},
	{"api_key.created", 4, "api_key", "key"},
	{"api_key.revoked", 2, "api_key", "key"},
	{"settings.changed", 8, "settings", "set"},
	{"data.exported", 4, "dataset", "dst"},
}

const eventWeightTotal = 100 // the sum of eventTypes' weights

// pickEventType returns the type whose cumulative weight covers x, x in
// [0, eventWeightTotal).
func pickEventType(x uint64) *eventType {
	for k := range eventTypes {
		if x < eventTypes[k].weight {
			return &eventTypes[k]
		}
		x -= eventTypes[k].weight
	}
	return &eventTypes[len(eventTypes)-1]
}

var (
	firstNames = [...]string{"anna", "ben", "chloe", "david", "emma", "farid", "grace", "hiro",
		"ines", "jonas", "kofi", "lena", "mateo", "nora", "omar", "priya"}
	lastNames = [...]string{"schmidt", "martin", "rossi", "garcia", "nowak", "tanaka", "silva", "okafor",
		"johansson", "dubois", "kowalski", "mueller", "fernandez", "kim", "novak", "patel"}
	domains    = [...]string{"example.com", "example.org", "corp.example", "mail.example.net"}
	actorTypes = [...]string{"user", "user", "user", "service", "system"}
	roles      = [...]string{"viewer", "editor", "admin", "billing", "auditor", "owner", "support", "developer"}
	userAgents = [...]string{
		"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
		"acme-cli/3.8.1 (linux; amd64) go1.22",
		"acme-agent/1.4.0 (windows; amd64)",
	}
	severities = [...]string{"info", "info", "info", "notice", "warning", "critical"}
	cities     = [...]struct{ country, city, lat, lon, locale string }{
		{"DE", "München", "48.1374", "11.5755", "de-DE"},
		{"DE", "Berlin", "52.5200", "13.4050", "de-DE"},
		{"FR", "Paris", "48.8566", "2.3522", "fr-FR"},
		{"BR", "São Paulo", "-23.5505", "-46.6333", "pt-BR"},
		{"JP", "東京", "35.6762", "139.6503", "ja-JP"},
		{"US", "New York", "40.7128", "-74.0060", "en-US"},
		{"US", "San Francisco", "37.7749", "-122.4194", "en-US"},
		{"IN", "Bengaluru", "12.9716", "77.5946", "en-IN"},
		{"GB", "London", "51.5072", "-0.1276", "en-GB"},
		{"CH", "Zürich", "47.3769", "8.5417", "de-CH"},
		{"ES", "A Coruña", "43.3623", "-8.4115", "es-ES"},
		{"SE", "Malmö", "55.6050", "13.0038", "sv-SE"},
		{"PL", "Kraków", "50.0647", "19.9450", "pl-PL"},
		{"CA", "Montréal", "45.5019", "-73.5674", "fr-CA"},
		{"AU", "Sydney", "-33.8688", "151.2093", "en-AU"},
		{"ZA", "Cape Town", "-33.9249", "18.4241", "en-ZA"},
	}
	apps        = [...]string{"web", "web", "ios", "android", "cli", "agent", "api"}
	installDirs = [...]string{`C:\\Program Files\\Acme\\Agent`, `C:\\Users\\Public\\Acme`, `/opt/acme/agent`}
	categories  = [...]string{"security", "authentication", "authorization", "billing", "compliance",
		"data-access", "configuration", "user-management", "api", "session", "export", "privacy",
		"gdpr", "soc2", "retention", "integration", "notification", "risk", "anomaly", "admin"}
	changeFields = [...]string{"status", "email", "role", "plan", "quota", "display_name", "locale",
		"timezone", "mfa", "ip_allowlist", "webhook_url", "retention_days"}
	changeValues = [...]string{"active", "suspended", "pending", "free", "team", "enterprise", "enabled",
		"disabled", "Europe/Berlin", "America/New_York", "Asia/Tokyo", "30", "90", "365", "none",
		`\"legacy\"`, "10.0.0.0/8", "https://hooks.example.com/audit"}
	envs    = [...]string{"prod", "prod", "prod", "staging", "dev"}
	regions = [...]string{"eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-northeast-1", "sa-east-1"}
	teams   = [...]string{"identity", "payments", "platform", "growth", "data", "security"}
	words   = [...]string{"the", "request", "was", "processed", "by", "gateway", "after", "policy",
		"evaluation", "and", "a", "token", "refresh", "user", "account", "session", "completed",
		"without", "errors", "while", "audit", "trail", "records", "every", "change", "to", "permissions",
		"settings", "for", "compliance", "review", "of", "tenant", "data", "export", "job", "queued",
		"approved", "rejected", "pending", "manual", "verification", "from", "new", "device", "location",
		"unusual", "activity", "flagged", "rule", "matched", "threshold", "exceeded", "notification",
		"sent", "administrator", "confirmed", "rollback", "scheduled", "within", "maintenance", "window",
		"in", "region"}
	// asides are inserted between sentences now and then; they hold
	// escapes, so that text loads exercise COPY's backslash handling.
	asides = [...]string{`(see \"runbook\" section 4)`, `\n`, `path C:\\logs\\audit.log`, `\t`, `—`, `✓`}
)

// pick returns a random element of list.
func pick[T any](s *stream, list []T) T { return list[s.intn(uint64(len(list)))] }

// appendPayload appends the current row's payload, a JSON object.
func (g *events) appendPayload(b []byte) []byte {
	s := &g.ps
	s.reset(g.payKey, g.row)
	target := g.payMin + int(s.intn(uint64(g.payMax-g.payMin+1)))
	start := len(b)

	b = append(b, `{"v":2,"event":"`...)
	b = append(b, g.typ.name...)
	b = append(b, `","occurred_at":"`...)
	b = appendCivil(b, g.micros, 'T')
	b = append(b, `Z","severity":"`...)
	b = append(b, pick(s, severities[:])...)

	first, last, n := pick(s, firstNames[:]), pick(s, lastNames[:]), s.intn(100)
	b = append(b, `","actor":{"id":`...)
	b = strconv.AppendUint(b, 1+s.intn(999_999), 10)
	b = append(b, `,"type":"`...)
	b = append(b, pick(s, actorTypes[:])...)
	b = append(b, `","name":"`...)
	b = appendName(b, first, last, n)
	b = append(b, `","email":"`...)
	b = appendName(b, first, last, n)
	b = append(b, '@')
	b = append(b, pick(s, domains[:])...)
	b = append(b, `","roles":[`...)
	for k, r0, nr := uint64(0), s.intn(uint64(len(roles))), 1+s.intn(3); k < nr; k++ { // distinct: consecutive in the list
		if k > 0 {
			b = append(b, ',')
		}
		b = appendQuoted(b, roles[(r0+k)%uint64(len(roles))])
	}
	b = append(b, `],"ip":"10.`...)
	ip := s.uint64()
	b = strconv.AppendUint(b, ip&0xff, 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, ip>>8&0xff, 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, 1+(ip>>16)%254, 10)
	b = append(b, `","mfa":`...)
	b = strconv.AppendBool(b, ip>>32&3 != 0)
	b = append(b, `,"user_agent":"`...)
	b = append(b, pick(s, userAgents[:])...)

	b = append(b, `"},"target":{"type":"`...)
	b = append(b, g.typ.target...)
	b = append(b, `","id":"`...)
	idAt := len(b)
	b = append(b, g.typ.prefix...)
	b = append(b, '_')
	b = s.appendHex(b, 16)
	idEnd := len(b)
	b = append(b, `","owner_id":`...)
	b = strconv.AppendUint(b, 1+s.intn(999_999), 10)
	tenant := s.intn(500)
	b = append(b, `,"path":"/tenants/t-`...)
	b = appendPadded(b, tenant)
	b = append(b, '/')
	b = append(b, g.typ.target...)
	b = append(b, "s/"...)
	b = append(b, b[idAt:idEnd]...)
	b = append(b, `"},"context":{"request_id":"`...)
	b = s.appendHex(b, 16)
	b = s.appendHex(b, 16)
	b = append(b, `","session_id":"`...)
	b = s.appendHex(b, 16)
	b = append(b, `","trace":{"trace_id":"`...)
	b = s.appendHex(b, 16)
	b = s.appendHex(b, 16)
	b = append(b, `","span_id":"`...)
	b = s.appendHex(b, 16)
	b = append(b, `","sampled":`...)
	b = strconv.AppendBool(b, s.intn(10) == 0)
	city := pick(s, cities[:])
	b = append(b, `},"geo":{"country":"`...)
	b = append(b, city.country...)
	b = append(b, `","city":"`...)
	b = append(b, city.city...)
	b = append(b, `","lat":`...)
	b = append(b, city.lat...)
	b = append(b, `,"lon":`...)
	b = append(b, city.lon...)
	app := pick(s, apps[:])
	b = append(b, `},"client":{"app":"`...)
	b = append(b, app...)
	b = append(b, `","version":"`...)
	v := s.uint64()
	b = strconv.AppendUint(b, 1+v%9, 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, v>>8%30, 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, v>>16%12, 10)
	b = append(b, `","locale":"`...)
	b = append(b, city.locale...)
	if app == "agent" {
		b = append(b, `","install_dir":"`...)
		b = append(b, pick(s, installDirs[:])...)
	}

	b = append(b, `"}},"categories":[`...)
	var order [len(categories)]uint8
	for k := range order {
		order[k] = uint8(k)
	}
	nc := 2 + int(s.intn(5))
	for k := 0; k < nc; k++ { // a partial Fisher–Yates shuffle: distinct categories
		r := k + int(s.intn(uint64(len(order)-k)))
		order[k], order[r] = order[r], order[k]
		if k > 0 {
			b = append(b, ',')
		}
		b = appendQuoted(b, categories[order[k]])
	}
	b = append(b, `],"categories_ids":[`...)
	for k, nid := uint64(0), 1+s.intn(8); k < nid; k++ {
		if k > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, 1+s.intn(1000), 10)
	}
	b = append(b, `],"changes":[`...)
	for k, nch := uint64(0), 1+s.intn(6); k < nch; k++ {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"field":"`...)
		b = append(b, pick(s, changeFields[:])...)
		b = append(b, `","from":"`...)
		b = append(b, pick(s, changeValues[:])...)
		b = append(b, `","to":"`...)
		b = append(b, pick(s, changeValues[:])...)
		b = append(b, `"}`...)
	}
	b = append(b, `],"labels":{"env":"`...)
	b = append(b, pick(s, envs[:])...)
	b = append(b, `","region":"`...)
	b = append(b, pick(s, regions[:])...)
	b = append(b, `","tenant":"t-`...)
	b = appendPadded(b, tenant)
	b = append(b, `","team":"`...)
	b = append(b, pick(s, teams[:])...)
	b = append(b, `"},"message":"`...)
	b = appendMessage(b, s, g.words, start+target-2) // 2: the closing `"}`
	return append(b, `"}`...)
}

// wordTable holds words as fixed 16-byte cells, "word " and padding, so
// that appendMessage copies each with two 8-byte moves.
type wordTable struct {
	cell [64][16]byte
	len  [64]uint8 // bytes of cell in use: the word and its space
}

// words must have 64 entries: appendMessage indexes it with six bits.
var _ = [1]struct{}{}[len(words)-64]

// messageWords builds the table once per process, on first use.
var messageWords = sync.OnceValue(func() *wordTable {
	t := new(wordTable)
	for k, w := range words {
		if len(w) > 15 {
			panic("gen: message word " + w + " longer than 15 bytes") // unreachable: words is fixed
		}
		t.len[k] = uint8(copy(t.cell[k][:], w+" "))
	}
	return t
})

// appendMessage appends sentences of random words until b is at least
// until bytes long. It takes six bits of a draw per word and copies words
// as fixed cells: the message is half the payload, and most of its cost.
func appendMessage(b []byte, s *stream, tab *wordTable, until int) []byte {
	var x uint64
	avail := 0
	bits6 := func() uint64 {
		if avail < 6 {
			x, avail = s.uint64(), 64
		}
		v := x & 63
		x >>= 6
		avail -= 6
		return v
	}
	wrote := false
	for len(b) < until {
		if a := bits6(); wrote && a < uint64(len(asides)) { // 6 in 64 sentences after the first start with an aside
			b = append(b, asides[a]...)
			b = append(b, ' ')
		}
		n := 6 + bits6()%9 // 6 to 14 words
		for k := uint64(0); k < n && len(b) < until; k++ {
			if cap(b)-len(b) < 16 {
				b = slices.Grow(b, 1024)
			}
			w, at := bits6(), len(b)
			b = b[:at+16]
			*(*[16]byte)(b[at:]) = tab.cell[w]
			b = b[:at+int(tab.len[w])]
		}
		b[len(b)-1] = '.' // in place of the last word's space
		b = append(b, ' ')
		wrote = true
	}
	if wrote {
		b = b[:len(b)-1] // the space after the last sentence
	}
	return b
}

// appendName appends first.lastNN.
func appendName(b []byte, first, last string, n uint64) []byte {
	b = append(b, first...)
	b = append(b, '.')
	b = append(b, last...)
	return strconv.AppendUint(b, n, 10)
}

// appendQuoted appends s (valid JSON string content) in double quotes.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendPadded appends n (under 10,000) as four digits.
func appendPadded(b []byte, n uint64) []byte {
	var d [4]byte
	put4(d[:], int64(n))
	return append(b, d[:]...)
}
