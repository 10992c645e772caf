package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// Redirects. A benchmark request is never redirected: Go's client drops Authorization on a
// redirect to another host but forwards every other header, so an X-Api-Key (or any --header
// credential) would be handed to whatever host a server names; and a followed redirect would
// put a second round trip into TTFT without the record saying so. The redirect is returned as
// the answer instead, an error naming its Location (RedirectError), and the user points --url
// at the final address. The requests made before a run (readiness, models, tokenize, server
// discovery) follow redirects that stay on the same scheme, host and port, which puts no
// credential anywhere new, and stop at any other.

// noRedirectKey marks a request context whose redirects are never followed.
type noRedirectKey struct{}

// withoutRedirects returns ctx marked so that a request made with it is not redirected.
func withoutRedirects(ctx context.Context) context.Context {
	return context.WithValue(ctx, noRedirectKey{}, true)
}

// maxRedirects bounds a chain of same-host redirects (Go's own default).
const maxRedirects = 10

// checkRedirect is the http.Client.CheckRedirect of NewHTTPClient (see above).
func checkRedirect(req *http.Request, via []*http.Request) error {
	if req.Context().Value(noRedirectKey{}) != nil {
		return http.ErrUseLastResponse
	}
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return http.ErrUseLastResponse
	}
	if len(via) >= maxRedirects {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// RedirectError is the error of a redirect that was not followed: the status and where it
// pointed (without any user information in that URL).
func RedirectError(t Target, resp *http.Response) *Error {
	where := "no Location"
	if u, err := resp.Location(); err == nil {
		where = u.Redacted()
	} else if l := resp.Header.Get("Location"); l != "" {
		where = excerpt([]byte(l), bodyExcerpt)
	}
	msg := fmt.Sprintf("redirect to %s not followed: benchmark requests are never redirected (credentials would travel with them); give --url the final address", where)
	return &Error{Class: StatusClass(resp.StatusCode), Status: resp.StatusCode, Msg: t.Redact(oneLine(msg))}
}
