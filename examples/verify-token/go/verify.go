// Package main verifies an entitlement token in Go (docs/entitlement-tokens.md) with the
// standard library only: crypto/ed25519 and encoding/json.
//
//	claims, err := Verify(token, "https://billing.example.com", "<tenant_id>:live", time.Now())
//	if err == nil && claims.Premium { ... }
package main

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Skew is the clock difference allowed between your clock and the service's.
const Skew = 60 * time.Second

type Claims struct {
	Iss          string `json:"iss"`
	Aud          string `json:"aud"`
	Sub          string `json:"sub"`
	TenantID     string `json:"tenant_id"`
	Mode         string `json:"mode"`
	Premium      bool   `json:"premium"`
	Entitlements []struct {
		ID        string  `json:"id"`
		ExpiresAt *string `json:"expires_at"`
	} `json:"entitlements"`
	Iat int64 `json:"iat"`
	Exp int64 `json:"exp"`
}

// keys holds the published keys by kid; a kid not seen yet fetches them again (a rotation).
var (
	mu   sync.Mutex
	keys = map[string]ed25519.PublicKey{}
)

func key(apiURL, kid string) (ed25519.PublicKey, error) {
	mu.Lock()
	defer mu.Unlock()
	if k, ok := keys[kid]; ok {
		return k, nil
	}
	client := http.Client{Timeout: 5 * time.Second}
	res, err := client.Get(strings.TrimRight(apiURL, "/") + "/.well-known/jwks.json")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var set struct {
		Keys []struct{ Kty, Crv, Kid, X string } `json:"keys"`
	}
	if err := json.NewDecoder(res.Body).Decode(&set); err != nil {
		return nil, err
	}
	for _, k := range set.Keys {
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if k.Kty == "OKP" && k.Crv == "Ed25519" && err == nil && len(x) == ed25519.PublicKeySize {
			keys[k.Kid] = ed25519.PublicKey(x)
		}
	}
	if k, ok := keys[kid]; ok {
		return k, nil
	}
	return nil, errors.New("unknown_key")
}

// Verify answers the token's claims once its signature, issuer, audience and expiry hold.
func Verify(token, apiURL, audience string, now time.Time) (*Claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, errors.New("malformed")
	}
	var header struct{ Alg, Kid, Typ string }
	var claims Claims
	h, errH := base64.RawURLEncoding.DecodeString(parts[0])
	p, errP := base64.RawURLEncoding.DecodeString(parts[1])
	sig, errS := base64.RawURLEncoding.DecodeString(parts[2])
	if errors.Join(errH, errP, errS, json.Unmarshal(h, &header), json.Unmarshal(p, &claims)) != nil {
		return nil, errors.New("malformed")
	}
	if header.Alg != "EdDSA" || header.Typ != "entitlements+jwt" {
		return nil, errors.New("malformed")
	}
	k, err := key(apiURL, header.Kid)
	if err != nil {
		return nil, err
	}
	if !ed25519.Verify(k, []byte(parts[0]+"."+parts[1]), sig) {
		return nil, errors.New("bad_signature")
	}
	switch {
	case claims.Iss != apiURL:
		return nil, errors.New("wrong_issuer")
	case claims.Aud != audience:
		return nil, errors.New("wrong_audience")
	case !now.Before(time.Unix(claims.Exp, 0).Add(Skew)):
		return nil, errors.New("expired")
	}
	return &claims, nil
}
