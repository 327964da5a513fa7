package server

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// hostPolicy decides which Host headers the server answers, the defence
// against DNS rebinding: a page on another site whose name an attacker
// points at this server's address reaches it with that name in Host, so
// refusing names the server was not meant to be reached by stops the page
// from reading or changing anything. IP addresses cannot be rebound (a page
// served from an address is that address's origin), localhost names
// resolve only to loopback, and the other names are listed.
type hostPolicy struct {
	anyIP   bool     // any IP address is a valid host, not only loopback ones
	anyName bool     // the list holds "*": every host is accepted
	names   []string // exact names, lower case, without a trailing dot
	domains []string // ".example.com": the name and its subdomains
	proxies []netip.Prefix
}

func newHostPolicy(allowed []string, public bool, proxies []netip.Prefix) hostPolicy {
	hp := hostPolicy{anyIP: public, proxies: proxies}
	for _, h := range allowed {
		h = normalHost(h)
		switch {
		case h == "":
		case h == "*":
			hp.anyName = true
		case strings.HasPrefix(h, "*."):
			hp.domains = append(hp.domains, h[1:])
		case strings.HasPrefix(h, "."):
			hp.domains = append(hp.domains, h)
		default:
			hp.names = append(hp.names, h)
		}
	}
	return hp
}

// normalHost returns the host name of a Host header or list entry: lower
// case, without port, brackets or trailing dot.
func normalHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimPrefix(strings.TrimSuffix(h, "]"), "[")
	return strings.TrimSuffix(h, ".")
}

// allows reports whether the server answers requests for host (a Host
// header, port included or not). An empty host, which only HTTP/1.0 clients
// send, is allowed: browsers always name the host.
func (hp *hostPolicy) allows(host string) bool {
	h := normalHost(host)
	if h == "" || hp.anyName {
		return true
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		if hp.anyIP || ip.IsLoopback() {
			return true
		}
	} else if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	for _, n := range hp.names {
		if h == n {
			return true
		}
	}
	for _, d := range hp.domains {
		if h == d[1:] || strings.HasSuffix(h, d) {
			return true
		}
	}
	return false
}

// fromProxy reports whether r came from a trusted reverse proxy, whose
// X-Forwarded-* headers describe the client.
func (hp *hostPolicy) fromProxy(r *http.Request) bool {
	if len(hp.proxies) == 0 {
		return false
	}
	return hp.trusted(peerAddr(r.RemoteAddr))
}

func (hp *hostPolicy) trusted(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	a = a.Unmap()
	for _, p := range hp.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peerAddr returns the address of a RemoteAddr ("ip:port"), invalid when it
// holds none.
func peerAddr(remote string) netip.Addr {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap()
	}
	a, _ := netip.ParseAddr(remote)
	return a.Unmap()
}

// host returns the host the client asked for: the proxy's X-Forwarded-Host
// for a request from a trusted proxy, else the Host header.
func (hp *hostPolicy) host(r *http.Request) string {
	if hp.fromProxy(r) {
		if h := firstValue(r.Header.Get("X-Forwarded-Host")); h != "" {
			return h
		}
	}
	return r.Host
}

// client returns the client's address: for a request from a trusted proxy,
// the last address of X-Forwarded-For that is not itself a trusted proxy
// (addresses to its left were written by the client and may be forged),
// else the connection's peer.
func (hp *hostPolicy) client(r *http.Request) string {
	peer := peerAddr(r.RemoteAddr)
	if hp.fromProxy(r) {
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break
			}
			if peer = a.Unmap(); !hp.trusted(peer) {
				break
			}
		}
	}
	if !peer.IsValid() {
		return r.RemoteAddr
	}
	return peer.String()
}

// scheme returns "https" or "http" as the client used it: the proxy's
// X-Forwarded-Proto for a request from a trusted proxy.
func (hp *hostPolicy) scheme(r *http.Request) string {
	if hp.fromProxy(r) {
		if p := firstValue(r.Header.Get("X-Forwarded-Proto")); p == "https" || p == "http" {
			return p
		}
	}
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

func firstValue(h string) string {
	v, _, _ := strings.Cut(h, ",")
	return strings.TrimSpace(v)
}

// checkHost refuses requests for hosts the server is not meant to be
// reached by with 421 Misdirected Request.
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := s.hosts.host(r); !s.hosts.allows(h) {
			s.error(w, r, errorf(errMisdirected, "this server does not answer to the host %q; start it with --allowed-hosts %s to allow it",
				h, normalHost(h)))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// baseURL returns the scheme and host the client used to reach the server,
// as a trusted reverse proxy reports them when the request came through one.
func (s *Server) baseURL(r *http.Request) string {
	return s.hosts.scheme(r) + "://" + s.hosts.host(r)
}
