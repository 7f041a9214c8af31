package proxmoxtest_test

import (
	"fmt"
	"net/http"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func Example() {
	s := proxmoxtest.NewServer(proxmoxtest.DemoCluster())
	defer s.Close()

	req, _ := http.NewRequest("GET", s.URL+"/api2/json/nodes/pve1/qemu/999/status/current", nil)
	req.Header.Set("Authorization", "PVEAPIToken="+proxmoxtest.DefaultTokenID+"="+proxmoxtest.DefaultTokenSecret)
	resp, err := s.Client().Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status)
	fmt.Println(len(s.MutatingRequests()))
	// Output:
	// 500 Configuration file 'nodes/pve1/qemu-server/999.conf' does not exist
	// 0
}
