package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Usage: verify-token API_URL AUDIENCE TOKEN [NOW_SECONDS]
// prints the claims as JSON, or the reason on stderr and exits 1.
func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: verify-token API_URL AUDIENCE TOKEN [NOW_SECONDS]")
		os.Exit(2)
	}
	now := time.Now()
	if len(os.Args) > 4 {
		s, err := strconv.ParseInt(os.Args[4], 10, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "NOW_SECONDS: not a number")
			os.Exit(2)
		}
		now = time.Unix(s, 0)
	}
	claims, err := Verify(os.Args[3], os.Args[1], os.Args[2], now)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = json.NewEncoder(os.Stdout).Encode(claims)
}
