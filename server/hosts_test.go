package server

import (
	"encoding/json"
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

// TestHostCheck is the DNS-rebinding defence: a page on another site whose
// name resolves to the server's address reaches it with that name in Host,
// and must neither read nor change anything, while the names the server is
// meant to be reached by keep working.
func TestHostCheck(t *testing.T) {
	e := newEnv(t, Config{AllowedHosts: []string{"perf.example.com", ".corp.example", "10.1.2.3"}})
	p := e.upload(perfText(1, 20, 1), "kept")
	port := e.srv.URL[strings.LastIndex(e.srv.URL, ":"):]
	text := perfText(1, 30, 1)
	for _, host := range []string{"rebind.attacker.example" + port, "rebind.attacker.example", "192.168.1.5" + port,
		"perf.example.com.attacker.example", "xcorp.example", "localhost.attacker.example"} {
		res, b := e.do("GET", "/api/profiles", nil, "Host", host)
		wantError(t, res, b, http.StatusMisdirectedRequest, "allowed-hosts")
		if strings.Contains(string(b), p.ID) {
			t.Errorf("GET /api/profiles with Host %q leaked the list: %s", host, b)
		}
		res, b = e.do("POST", "/api/profiles", strings.NewReader(text), "Host", host)
		wantError(t, res, b, http.StatusMisdirectedRequest, "allowed-hosts")
		res, b = e.do("DELETE", "/api/profiles/"+p.ID, nil, "Host", host)
		wantError(t, res, b, http.StatusMisdirectedRequest, "allowed-hosts")
		if res, _ := e.do("GET", "/p/"+p.ID, nil, "Host", host); res.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("page with Host %q: %d; want 421", host, res.StatusCode)
		}
	}
	if n := e.count(); n != 1 {
		t.Fatalf("store holds %d profiles after refused requests; want 1", n)
	}
	for _, host := range []string{"localhost" + port, "LocalHost.", "app.localhost" + port, "127.0.0.1" + port, "127.1.2.3",
		"[::1]" + port, "perf.example.com" + port, "PERF.example.com.", "corp.example", "a.b.corp.example" + port, "10.1.2.3" + port} {
		if res, b := e.do("GET", "/api/profiles", nil, "Host", host); res.StatusCode != http.StatusOK {
			t.Errorf("GET /api/profiles with Host %q: %d %s; want 200", host, res.StatusCode, b)
		}
	}
	res, b := e.do("POST", "/api/profiles", strings.NewReader(text), "Host", "perf.example.com"+port)
	var up uploadResponse
	if err := json.Unmarshal(b, &up); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("upload to an allowed host: %d %s", res.StatusCode, b)
	}
	if want := "http://perf.example.com" + port + "/p/" + up.Profile.ID; up.URL != want {
		t.Errorf("upload link = %q; want %q", up.URL, want)
	}
}

// TestHostCheckPublic: a server listening on every address answers to any
// IP address, which cannot be rebound, but still not to other names.
func TestHostCheckPublic(t *testing.T) {
	e := newEnv(t, Config{Public: true})
	for host, want := range map[string]int{
		"192.168.1.5:8080":         http.StatusOK,
		"[2001:db8::1]:8080":       http.StatusOK,
		"localhost:8080":           http.StatusOK,
		"rebind.attacker.example":  http.StatusMisdirectedRequest,
		"192.168.1.5.attacker.net": http.StatusMisdirectedRequest,
	} {
		if res, b := e.do("GET", "/api/profiles", nil, "Host", host); res.StatusCode != want {
			t.Errorf("GET /api/profiles with Host %q: %d %s; want %d", host, res.StatusCode, b, want)
		}
	}
	if res, _ := e.do("GET", "/api/profiles", nil, "Host", "anything.example"); res.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("public server answered an unlisted name: %d", res.StatusCode)
	}
	any := newEnv(t, Config{AllowedHosts: []string{"*"}})
	if res, _ := any.do("GET", "/api/profiles", nil, "Host", "anything.example"); res.StatusCode != http.StatusOK {
		t.Errorf("--allowed-hosts '*' refused a name: %d", res.StatusCode)
	}
}

// TestTrustedProxy: the X-Forwarded-* headers of a trusted proxy decide the
// host that is checked and linked to; anyone else's are ignored.
func TestTrustedProxy(t *testing.T) {
	text := perfText(1, 20, 1)
	direct := newEnv(t, Config{})
	// Without a trusted proxy the forwarded headers cannot pass a foreign
	// host nor forge the links.
	res, b := direct.do("POST", "/api/profiles", strings.NewReader(text),
		"X-Forwarded-Host", "evil.example", "X-Forwarded-Proto", "https")
	var up uploadResponse
	if err := json.Unmarshal(b, &up); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("upload: %d %s", res.StatusCode, b)
	}
	if want := direct.srv.URL + "/p/" + up.Profile.ID; up.URL != want {
		t.Errorf("link from untrusted forwarded headers = %q; want %q", up.URL, want)
	}

	proxied := newEnv(t, Config{AllowedHosts: []string{"perf.example.com"},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
	res, b = proxied.do("GET", "/api/profiles", nil, "Host", "perf.example.com", "X-Forwarded-Host", "rebind.attacker.example")
	wantError(t, res, b, http.StatusMisdirectedRequest, "rebind.attacker.example")
	res, b = proxied.do("POST", "/api/profiles", strings.NewReader(text), "Host", "127.0.0.1:8080",
		"X-Forwarded-Host", "perf.example.com", "X-Forwarded-Proto", "https")
	if err := json.Unmarshal(b, &up); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("proxied upload: %d %s", res.StatusCode, b)
	}
	if want := "https://perf.example.com/p/" + up.Profile.ID; up.URL != want {
		t.Errorf("proxied link = %q; want %q", up.URL, want)
	}
}

func TestHostPolicyClient(t *testing.T) {
	hp := newHostPolicy(nil, false, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")})
	for _, tc := range []struct {
		remote, xff, want string
	}{
		{"192.0.2.7:5000", "", "192.0.2.7"},
		{"192.0.2.7:5000", "198.51.100.1", "192.0.2.7"},             // not a proxy: header ignored
		{"10.0.0.2:5000", "198.51.100.1", "198.51.100.1"},           // from the proxy
		{"10.0.0.2:5000", "6.6.6.6, 198.51.100.1", "198.51.100.1"},  // the client's own entry is forgeable
		{"10.0.0.2:5000", "198.51.100.1, 10.0.0.9", "198.51.100.1"}, // two proxies
		{"10.0.0.2:5000", "", "10.0.0.2"},                           // no header
		{"[::ffff:10.0.0.2]:5000", "198.51.100.1", "198.51.100.1"},  // mapped address
		{"10.0.0.2:5000", "garbage, 198.51.100.1", "198.51.100.1"},
	} {
		r, _ := http.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.remote
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if got := hp.client(r); got != tc.want {
			t.Errorf("client(%s, X-Forwarded-For %q) = %s; want %s", tc.remote, tc.xff, got, tc.want)
		}
	}
}
