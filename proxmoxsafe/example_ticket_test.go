package proxmoxsafe_test

import (
	"context"
	"fmt"
	"log"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// A user and password instead of an API token: the client logs in at the
// first call and keeps its ticket fresh. Tokens stay the recommendation.
func ExampleConfig_password() {
	cluster := exampleCluster()
	cluster.Users = map[string]*proxmoxtest.User{
		"ops@pve": {Password: "a long passphrase", Privileges: map[string][]string{"/": {"Sys.Audit", "VM.Audit"}}},
	}
	fake := proxmoxtest.NewServer(cluster)
	defer fake.Close()

	c, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL:         fake.URL,
		Username:    "ops",
		Realm:       "pve",
		Password:    "a long passphrase", // e.g. read from a file, never a flag
		Fingerprint: fake.Fingerprint(),
	})
	if err != nil {
		log.Fatal(err)
	}
	st, err := c.ClusterStatus(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	auth := c.AuthStatus()
	fmt.Println(st.Name, auth.Method, auth.Principal, !auth.TicketExpiry.IsZero())
	// Output: homelab ticket ops@pve true
}
