package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/textform"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// A fleet is one MCP server for several clusters, each a
// *proxmoxsafe.Client with its own credentials, policy, audit sink and
// approvers, known by its [proxmoxsafe.Config.ClusterName]. It is built
// generically where tools are registered: every tool of the list gets a
// required "cluster" parameter, so a tool added to the list is a fleet
// tool without a line of its own.
//
//   - The cluster is named, never inferred: two clusters may both have
//     pve1/qemu/100. "cluster" is required, its enum the clusters whose
//     policy offers the tool, and matched exactly. A call that names none,
//     or one that is not configured, is refused before anything is read,
//     as a schema refusal (nothing is sent, and nothing is audited: no
//     cluster was named whose log could say so, as for an unknown tool).
//     A cluster whose policy does not offer the tool refuses the call with
//     nothing sent; for a mutation tool that refusal is audited there.
//   - The call then runs exactly as a one-cluster server runs it, on that
//     cluster's client: validation, policy, approval, audit and the one
//     request keep their order. Approvals bind the cluster (its name is in
//     every phrase and in what grants and elicitations bind), so an
//     approval for one cluster never approves the same call on another.
//   - Every result names its cluster: structuredContent gets a top-level
//     "cluster" member (the served output schemas allow further members;
//     the fleet's state it), an error's text starts with "[name] " and its
//     error object has "cluster".
//
// With one client, NewFleet is New and AddFleetTools is AddTools: nothing
// changes, no parameter is added.

// FleetClusterParam is the parameter every tool of a fleet server takes.
const FleetClusterParam = "cluster"

// FleetAll, as the cluster of a fleet read (list_guests, health_report,
// storage_list, backup_coverage), reads every cluster that offers the tool.
const FleetAll = "*"

// NewFleet returns an MCP server for the clusters of clients, each named
// by its Config.ClusterName, with the middleware of [FleetMiddleware].
// opts apply to every cluster (ReadOnly, Selection, the approval page);
// each cluster's own policy decides what it offers. NewFleet panics on no
// client, a nil one, and, with more than one, a client without a cluster
// name or two with the same name: programmer errors.
func NewFleet(clients []*proxmoxsafe.Client, opts *Options) *mcp.Server {
	checkFleet(clients)
	if len(clients) == 1 {
		return New(clients[0], opts)
	}
	o := opts.orDefault()
	version := o.Version
	if version == "" {
		version = "dev"
	}
	s := mcp.NewServer(&mcp.Implementation{
		Name:    ServerName,
		Title:   fmt.Sprintf("Proxmox VE (%d clusters)", len(clients)),
		Version: version,
	}, &mcp.ServerOptions{
		Instructions: FleetInstructions(clients, o),
		Logger:       newSDKLogger(o),
	})
	addFleetTools(s, clients, o)
	s.AddReceivingMiddleware(FleetMiddleware(clients, o)...)
	return s
}

// AddFleetTools registers the tools of a fleet on server, as [AddTools]
// does for one client (and with one client it is AddTools). Install
// [FleetMiddleware] too, and pass [FleetInstructions] as the server's
// instructions. It panics as [NewFleet] does, and as AddTools does on a
// tool this package already registered on server.
func AddFleetTools(server *mcp.Server, clients []*proxmoxsafe.Client, opts *Options) {
	if server == nil {
		panic("mcpserver.AddFleetTools: nil server")
	}
	checkFleet(clients)
	if len(clients) == 1 {
		AddTools(server, clients[0], opts)
		return
	}
	addFleetTools(server, clients, opts.orDefault())
}

// FleetMiddleware is [Middleware] for a fleet: a schema refusal of a
// mutation is audited by the cluster the call names.
func FleetMiddleware(clients []*proxmoxsafe.Client, opts *Options) []mcp.Middleware {
	checkFleet(clients)
	if len(clients) == 1 {
		return Middleware(clients[0], opts)
	}
	o := opts.orDefault()
	byName := fleetByName(clients)
	resolve := func(req mcp.Request) *proxmoxsafe.Client {
		name, ok := namedCluster(req)
		if !ok {
			return nil
		}
		return byName[name]
	}
	return []mcp.Middleware{LoggingMiddleware(o.Logger), errorMetaMiddleware, namedRefusals(byName), schemaRefusals(resolve), RecoverMiddleware(o.Logger), nullArgumentsMiddleware}
}

// namedRefusals names the cluster in a refusal written after the tool's
// handler (SchemaRefusalMiddleware's, which rewrites the whole text), as
// the handler names it in every other result.
func namedRefusals(byName map[string]*proxmoxsafe.Client) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			ctr, ok := res.(*mcp.CallToolResult)
			if method != "tools/call" || err != nil || !ok || ctr == nil || !ctr.IsError || ctr.StructuredContent != nil || len(ctr.Content) == 0 {
				return res, err
			}
			name, named := namedCluster(req)
			if _, known := byName[name]; !named || !known {
				return res, err
			}
			if tc, ok := ctr.Content[0].(*mcp.TextContent); ok && !strings.HasPrefix(tc.Text, "["+name+"] ") {
				namedResult(ctr, name)
			}
			return res, err
		}
	}
}

// FleetInstructions are the instructions of a fleet server: those of
// every tool some cluster offers, and how to name a cluster.
func FleetInstructions(clients []*proxmoxsafe.Client, opts *Options) string {
	checkFleet(clients)
	if len(clients) == 1 {
		return ServerInstructions(clients[0], opts)
	}
	o := opts.orDefault()
	var defs []toolDef
	for _, d := range toolList() {
		if len(fleetEnabled(d, clients, o)) > 0 {
			defs = append(defs, d)
		}
	}
	return instructionsFor(defs, 0) + "\n" + fleetInstructions(clients)
}

// fleetInstructions says once what every tool's cluster parameter means.
func fleetInstructions(clients []*proxmoxsafe.Client) string {
	return "This server serves several Proxmox VE clusters (" + strings.Join(fleetNames(clients), ", ") +
		"). Every tool takes cluster, the one it acts on: name it exactly, never guess it from a node name or VMID (clusters may share them). " +
		"cluster_list shows each one's policy. An approval names its cluster and approves nothing on another."
}

// FleetTools returns the tools a fleet server lists, as [Tools] does for
// one client: cluster_list, then every tool some cluster's policy offers,
// with the cluster parameter (its enum the clusters that offer it).
func FleetTools(clients []*proxmoxsafe.Client, opts *Options) []ToolInfo {
	checkFleet(clients)
	if len(clients) == 1 {
		return Tools(clients[0], opts)
	}
	o := opts.orDefault()
	out := []ToolInfo{clusterListTool().build()}
	for _, d := range toolList() {
		on := fleetEnabled(d, clients, o)
		if len(on) == 0 {
			continue
		}
		info := d.build()
		applyWaitCap(&info, fleetWaitClient(on))
		addClusterParam(info.InputSchema, fleetNames(on), fleetReads[d.info.Name] != nil)
		addClusterResult(info.OutputSchema)
		if r := fleetReads[d.info.Name]; r != nil {
			info.OutputSchema = mergeSchemas(info.OutputSchema, r.result())
		}
		out = append(out, info)
	}
	return out
}

func checkFleet(clients []*proxmoxsafe.Client) {
	if len(clients) == 0 {
		panic("mcpserver: a fleet needs at least one client")
	}
	seen := map[string]bool{}
	for _, c := range clients {
		if c == nil {
			panic("mcpserver: a fleet's client is nil")
		}
		if len(clients) == 1 {
			return
		}
		name := c.Cluster().Name
		if name == "" {
			panic("mcpserver: every client of a fleet of several needs its Config.ClusterName")
		}
		if seen[name] {
			panic(fmt.Sprintf("mcpserver: two clients of the fleet are named %q", name))
		}
		seen[name] = true
	}
}

func fleetNames(clients []*proxmoxsafe.Client) []string {
	names := make([]string, len(clients))
	for i, c := range clients {
		names[i] = c.Cluster().Name
	}
	return names
}

func fleetByName(clients []*proxmoxsafe.Client) map[string]*proxmoxsafe.Client {
	m := make(map[string]*proxmoxsafe.Client, len(clients))
	for _, c := range clients {
		m[c.Cluster().Name] = c
	}
	return m
}

// fleetEnabled returns the clients whose policy offers d, in fleet order.
func fleetEnabled(d toolDef, clients []*proxmoxsafe.Client, o *Options) []*proxmoxsafe.Client {
	var on []*proxmoxsafe.Client
	for _, c := range clients {
		if d.enabled(c, o) {
			on = append(on, c)
		}
	}
	return on
}

// fleetWaitClient is the client of on whose wait cap is largest: the
// served schema states that cap; each cluster's library still clamps a
// wait to its own.
func fleetWaitClient(on []*proxmoxsafe.Client) *proxmoxsafe.Client {
	best := on[0]
	for _, c := range on[1:] {
		if c.MaxWait() > best.MaxWait() {
			best = c
		}
	}
	return best
}

// fleetTool is one tool of a fleet server: the handler each cluster that
// offers it registered (as its own server would have), by name.
type fleetTool struct {
	name     string
	handlers map[string]mcp.ToolHandler
	clients  map[string]*proxmoxsafe.Client // every cluster of the fleet
	names    []string                       // the clusters that offer the tool, in fleet order
	check    func() (*jsonschema.Resolved, error)
	adapters map[string]*adapter
	in       func() (*jsonschema.Resolved, error) // the tool's own input schema (a cluster's)
	read     *fleetRead                           // fleet_reads.go; nil: one cluster per call
	out      func() (*jsonschema.Resolved, error) // the served output schema (a fleet read's results are checked against it in tests)
	mutation bool
	op       proxmoxsafe.Operation
}

// collected is a toolAdder that keeps the handler instead of serving it.
type collected struct{ h mcp.ToolHandler }

func (c *collected) AddTool(_ *mcp.Tool, h mcp.ToolHandler) { c.h = h }

func addFleetTools(server *mcp.Server, clients []*proxmoxsafe.Client, o *Options) {
	if o.ApprovalPageURL != "" {
		if err := checkApprovalPageURL(o.ApprovalPageURL); err != nil {
			panic(err)
		}
	}
	if err := o.Selection.Check(); err != nil {
		panic("mcpserver: " + err.Error())
	}
	byName := fleetByName(clients)
	adapters := make(map[string]*adapter, len(clients))
	for _, c := range clients {
		adapters[c.Cluster().Name] = &adapter{client: c, readOnly: o.ReadOnly, log: o.logger(), beforeCall: o.beforeCall, approvalPage: o.ApprovalPageURL}
	}
	type entry struct {
		tool *mcp.Tool
		ft   *fleetTool
	}
	var entries []entry
	var names []string
	servedOn := map[string][]string{} // cluster: the tools served there
	for _, d := range toolList() {
		on := fleetEnabled(d, clients, o)
		if len(on) == 0 {
			continue
		}
		for _, c := range on {
			servedOn[c.Cluster().Name] = append(servedOn[c.Cluster().Name], d.info.Name)
		}
		ft := &fleetTool{name: d.info.Name, handlers: map[string]mcp.ToolHandler{}, clients: byName, names: fleetNames(on),
			adapters: adapters, in: d.served(on[0].MaxWait()).in, read: fleetReads[d.info.Name]}
		if op, ok := mutationOp(d.info.Name); ok {
			ft.mutation, ft.op = true, op
		}
		for _, c := range on {
			var col collected
			d.register(&col, d.served(c.MaxWait()), adapters[c.Cluster().Name])
			ft.handlers[c.Cluster().Name] = col.h
		}
		st := d.served(fleetWaitClient(on).MaxWait())
		t := *st.tool
		t.InputSchema = withClusterParam(st.tool.InputSchema.(json.RawMessage), ft.names, d.info.Name, ft.read != nil)
		if out, ok := st.tool.OutputSchema.(json.RawMessage); ok { // an image tool has none (metrics_chart.go)
			out = withClusterResult(out)
			if ft.read != nil {
				out = withFleetResult(out, ft.read.result())
			}
			t.OutputSchema = out
			ft.out = resolveJSON(out)
		}
		ft.check = resolveJSON(clusterOnlySchema(ft.names, ft.read != nil))
		entries = append(entries, entry{&t, ft})
		names = append(names, d.info.Name)
	}
	cl := clusterListTool() // cluster_list.go: about every cluster, no cluster parameter
	names = append([]string{cl.info.Name}, names...)
	claimToolNames(server, names) // registered.go
	cl.register(server, cl.served(proxmoxsafe.DefaultMaxWait), &adapter{client: clients[0], fleet: clients,
		readOnly: o.ReadOnly, log: o.logger(), beforeCall: o.beforeCall, approvalPage: o.ApprovalPageURL})
	for _, e := range entries {
		server.AddTool(e.tool, e.ft.handle)
	}
	var servedAny []string
	for _, c := range clients { // resources.go, prompts.go: named by cluster
		addResourcesAt(server, adapters[c.Cluster().Name], servedOn[c.Cluster().Name], c.Cluster().Name)
		servedAny = append(servedAny, servedOn[c.Cluster().Name]...)
	}
	addAppResources(server, servedAny) // metrics_chart_app.go: one view for every cluster
	addPromptsFor(server, fleetNames(clients), func(c string) []string { return servedOn[c] })
}

// handle picks the cluster the call names and runs the call there, with
// the arguments without "cluster", then names the cluster in the result.
func (f *fleetTool) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ctx = watchSends(ctx) // content.go: what the error object's action_taken says
	raw := req.Params.Arguments
	if path, repeated := repeatedKey(raw); repeated { // arguments.go: before the cluster is read
		var res mcp.CallToolResult
		res.SetError(&repeatedKeyError{path: path})
		return &res, nil
	}
	args := map[string]json.RawMessage{}
	if len(raw) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if err := json.Unmarshal(raw, &args); err != nil {
			var res mcp.CallToolResult
			res.SetError(fmt.Errorf("validating \"arguments\": unmarshaling arguments: %w", err))
			return &res, nil
		}
	}
	if targets, ok := f.fleetTargets(args[FleetClusterParam]); ok {
		delete(args, FleetClusterParam)
		rest, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		res, err := f.read.run(ctx, targets, rest, f.in)
		if err == nil {
			err = checkFleetResult(res, f.out)
		}
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	name, known := clusterArg(args)
	if !known || !slices.Contains(f.names, name) {
		if _, configured := f.clients[name]; known && configured {
			return f.notOffered(ctx, name), nil
		}
		// Checked as the schema states it, so the refusal reads as every
		// other schema refusal (SchemaRefusalMiddleware).
		r, err := f.check()
		if err == nil {
			var v any = map[string]any{FleetClusterParam: jsonValue(args[FleetClusterParam])}
			if args[FleetClusterParam] == nil {
				v = map[string]any{}
			}
			err = r.Validate(&v)
		}
		if err == nil {
			err = fmt.Errorf("%s: must be one of %s", FleetClusterParam, strings.Join(f.names, ", "))
		}
		var res mcp.CallToolResult
		res.SetError(fmt.Errorf("validating \"arguments\": %v", err))
		return &res, nil
	}
	delete(args, FleetClusterParam)
	rest, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	r2 := *req
	p := *req.Params
	p.Arguments = rest
	r2.Params = &p
	res, err := f.handlers[name](ctx, &r2)
	if err != nil || res == nil {
		return res, err
	}
	return namedResult(res, name), nil
}

// notOffered refuses a call on a configured cluster whose policy does not
// offer the tool; a mutation's refusal is audited there.
func (f *fleetTool) notOffered(ctx context.Context, name string) *mcp.CallToolResult {
	err := &proxmoxsafe.RefusalError{Kind: proxmoxsafe.ErrNotAllowed,
		Reason: fmt.Sprintf("%s is not offered on cluster %s: its policy does not enable it (cluster_list shows what each cluster allows; offered on %s)", f.name, name, strings.Join(f.names, ", "))}
	if f.mutation {
		f.clients[name].RecordRefusal(ctx, f.op, err)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: withErrorJSON(ctx, f.name, err.Error(), err)}}}
	res.SetError(err)
	return namedResult(res, name)
}

// fleetTargets returns the adapters of a fleet read's clusters: "*" for
// every cluster that offers the tool, or a list of them (each once), in
// fleet order. ok is false for anything else (one name included).
func (f *fleetTool) fleetTargets(raw json.RawMessage) ([]*adapter, bool) {
	if f.read == nil || raw == nil {
		return nil, false
	}
	var names []string
	var one string
	switch {
	case json.Unmarshal(raw, &one) == nil && one == FleetAll:
		names = f.names
	case json.Unmarshal(raw, &names) == nil && len(names) > 0:
		for i, n := range names {
			if !slices.Contains(f.names, n) || slices.Contains(names[:i], n) {
				return nil, false
			}
		}
	default:
		return nil, false
	}
	var out []*adapter
	for _, n := range f.names {
		if slices.Contains(names, n) {
			out = append(out, f.adapters[n])
		}
	}
	return out, true
}

// clusterArg returns the "cluster" argument when it is a JSON string.
func clusterArg(args map[string]json.RawMessage) (string, bool) {
	v, ok := args[FleetClusterParam]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// namedCluster returns the cluster a tools/call names, when it names one
// exactly once as a string.
func namedCluster(req mcp.Request) (string, bool) {
	ctr, ok := req.(*mcp.CallToolRequest)
	if !ok || ctr.Params == nil {
		return "", false
	}
	raw := ctr.Params.Arguments
	if path, repeated := repeatedKey(raw); repeated && path == FleetClusterParam {
		return "", false
	}
	args := map[string]json.RawMessage{}
	if json.Unmarshal(raw, &args) != nil {
		return "", false
	}
	return clusterArg(args)
}

func jsonValue(raw json.RawMessage) any {
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
}

// namedResult names the cluster in res: a top-level "cluster" member of
// structuredContent (and so of the text's data, written again from it), or
// "[name] " before an error's words and "cluster" in its error object.
func namedResult(res *mcp.CallToolResult, name string) *mcp.CallToolResult {
	if js, ok := res.StructuredContent.(json.RawMessage); ok && len(js) > 1 && js[0] == '{' {
		member, _ := json.Marshal(name)
		out := append([]byte(`{"cluster":`), member...)
		if !bytes.Equal(bytes.TrimSpace(js[1:]), []byte("}")) {
			out = append(out, ',')
		}
		out = append(out, js[1:]...)
		res.StructuredContent = json.RawMessage(out)
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				summary, _, _ := strings.Cut(tc.Text, "\n\n")
				text := appendWords(nil, summary)
				if len(text) > 0 {
					text = append(text, "\n\n"...)
				}
				if t, err := textform.Append(text, out, textOptions); err == nil {
					tc.Text = string(bytes.TrimSuffix(t, []byte("\n")))
				}
			}
		}
		return res
	}
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			continue
		}
		text := "[" + name + "] " + tc.Text
		if i := strings.LastIndexByte(text, '\n'); i >= 0 && strings.HasPrefix(text[i+1:], `{"error":{`) {
			member, _ := json.Marshal(name)
			text = text[:i+1] + `{"error":{"cluster":` + string(member) + "," + text[i+1+len(`{"error":{`):]
		}
		tc.Text = text
		break
	}
	return res
}

// withClusterParam adds the required "cluster" parameter, its enum names,
// to the pre-marshalled input schema in.
func withClusterParam(in json.RawMessage, names []string, tool string, several bool) json.RawMessage {
	var s jsonschema.Schema
	if err := json.Unmarshal(in, &s); err != nil {
		panic(fmt.Sprintf("mcpserver: %s: decoding its input schema: %v", tool, err))
	}
	if s.Properties[FleetClusterParam] != nil {
		panic(fmt.Sprintf("mcpserver: %s has a parameter %q of its own, which a fleet needs", tool, FleetClusterParam))
	}
	s.PropertyOrder = propertyOrder(in)
	addClusterParam(&s, names, several)
	return mustMarshal(&s)
}

// addClusterParam adds the cluster parameter to s; several, for a fleet
// read, also takes "*" or a list of names.
func addClusterParam(s *jsonschema.Schema, names []string, several bool) {
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	enum := make([]any, len(names))
	for i, n := range names {
		enum[i] = n
	}
	p := &jsonschema.Schema{Type: "string", Enum: enum, Description: "The cluster to act on."}
	if several {
		p = &jsonschema.Schema{Description: "The cluster to read; \"*\" for all, or a list.", AnyOf: []*jsonschema.Schema{
			{Type: "string", Enum: append(slices.Clone(enum), FleetAll)},
			{Type: "array", Items: &jsonschema.Schema{Type: "string", Enum: enum}, MinItems: jsonschema.Ptr(1), UniqueItems: true},
		}}
	}
	s.Properties[FleetClusterParam] = p
	s.PropertyOrder = append([]string{FleetClusterParam}, slices.DeleteFunc(s.PropertyOrder, func(p string) bool { return p == FleetClusterParam })...)
	s.Required = append([]string{FleetClusterParam}, s.Required...)
}

// withClusterResult adds the "cluster" member every fleet result has.
func withClusterResult(out json.RawMessage) json.RawMessage {
	if len(out) == 0 {
		return out
	}
	var s jsonschema.Schema
	if json.Unmarshal(out, &s) != nil {
		return out
	}
	s.PropertyOrder = propertyOrder(out)
	addClusterResult(&s)
	return mustMarshal(&s)
}

// propertyOrder returns the names of the top-level "properties" of the
// schema raw in the order written (a decoded schema forgets it).
func propertyOrder(raw json.RawMessage) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil || top["properties"] == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(top["properties"]))
	var names []string
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		name, _ := t.(string)
		names = append(names, name)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil
		}
	}
	return names
}

func addClusterResult(s *jsonschema.Schema) {
	if s == nil || s.Properties == nil || s.Properties[FleetClusterParam] != nil {
		return
	}
	s.Properties[FleetClusterParam] = &jsonschema.Schema{Type: "string"}
	s.PropertyOrder = append([]string{FleetClusterParam}, s.PropertyOrder...)
}

// clusterOnlySchema checks "cluster" alone, as the tool's schema states it.
func clusterOnlySchema(names []string, several bool) json.RawMessage {
	s := &jsonschema.Schema{Type: "object"}
	addClusterParam(s, names, several)
	s.PropertyOrder = nil
	return mustMarshal(s)
}
