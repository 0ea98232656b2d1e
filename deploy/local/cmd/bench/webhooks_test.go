package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/loadgen"
	"github.com/liveproctor/workspaces/pkg/webhook"
)

// TestDeliveryMatchesEventsWithTheirChanges checks what a round's
// deliveries come to: the acknowledged changes whose events came, the
// delays from each answer, duplicates, messages of no acknowledged change,
// the span and the wait after the round, and who sent them.
func TestDeliveryMatchesEventsWithTheirChanges(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	end := t0.Add(10 * time.Second)
	acked := map[string]time.Time{"whb-1": t0, "whb-2": t0.Add(time.Second), "whb-3": t0.Add(2 * time.Second), "whb-4": t0.Add(9 * time.Second)}
	got := received{
		Messages: 6, // whb-1 twice, whb-2, whb-3, and two events of no acknowledged change
		Distinct: 5,
		ByRequest: map[string]hookDelivery{
			"whb-1":  {At: t0.Add(2200 * time.Millisecond), Sender: "workspace-1"},
			"whb-2":  {At: t0.Add(3500 * time.Millisecond), Sender: "workspace-2"},
			"whb-3":  {At: t0.Add(4300 * time.Millisecond), Sender: "workspace-1"},
			"whb-99": {At: t0.Add(5 * time.Second)},
		},
	}
	d := newDelivery(acked, got, end)
	if d.Recorded != 4 || d.Delivered != 3 || d.Messages != 6 || d.Duplicates != 1 || d.Other != 2 {
		t.Errorf("recorded %d, delivered %d, messages %d, again %d, other %d; want 4, 3, 6, 1, 2",
			d.Recorded, d.Delivered, d.Messages, d.Duplicates, d.Other)
	}
	want := []time.Duration{2200 * time.Millisecond, 2300 * time.Millisecond, 2500 * time.Millisecond}
	if len(d.Delays) != len(want) {
		t.Fatalf("delays %v, want %v", d.Delays, want)
	}
	for i := range want {
		if d.Delays[i] != want[i] {
			t.Fatalf("delays %v, want %v", d.Delays, want)
		}
	}
	for p, want := range map[float64]time.Duration{50: 2300 * time.Millisecond, 99: 2500 * time.Millisecond, 100: 2500 * time.Millisecond, 1: 2200 * time.Millisecond} {
		if got := d.Delay(p); got != want {
			t.Errorf("delay p%v = %s, want %s", p, got, want)
		}
	}
	if d.Span != 2100*time.Millisecond || d.Drain != 0 {
		t.Errorf("span %s, wait after the round %s; want 2.1s and 0", d.Span, d.Drain)
	}
	if rate := d.Rate(); rate < 1.42 || rate > 1.43 {
		t.Errorf("%.3f deliveries a second, want 3 / 2.1 s", rate)
	}
	if d.BySender["workspace-1"] != 2 || d.BySender["workspace-2"] != 1 || len(d.BySender) != 2 {
		t.Errorf("by sender %v", d.BySender)
	}

	// A delivery after the round's end is the wait.
	got.ByRequest["whb-4"] = hookDelivery{At: end.Add(1500 * time.Millisecond)}
	if d := newDelivery(acked, got, end); d.Delivered != 4 || d.Drain != 1500*time.Millisecond || d.Other != 1 {
		t.Errorf("delivered %d, wait %s, other %d; want 4, 1.5s, 1", d.Delivered, d.Drain, d.Other)
	}
}

// TestCPUPerDeliveryIsBeyondTheChanges checks the CPU a delivery costs:
// the rounds with webhooks' CPU less their changes at the reference's CPU
// per change, over the deliveries.
func TestCPUPerDeliveryIsBeyondTheChanges(t *testing.T) {
	round := func(changes int, workspace, ferretdb time.Duration, delivered int) changeRound {
		r := changeRound{measurement: measurement{Result: &loadgen.Result{Requests: changes, Elapsed: 10 * time.Second},
			CPU: []processCPU{{"workspace", workspace}, {"ferretdb", ferretdb}, {"bench", time.Second}}}}
		if delivered >= 0 {
			r.Delivery = &delivery{Recorded: changes, Delivered: delivered}
		}
		return r
	}
	// Without: 1,000 µs of the workspace service and 2,000 of ferretdb per
	// change. With: 200 changes, 190 delivered.
	b := &webhookBench{
		Reference: []changeRound{round(200, 200*time.Millisecond, 400*time.Millisecond, -1), round(200, 200*time.Millisecond, 400*time.Millisecond, -1)},
		Hooked:    []changeRound{round(100, 195*time.Millisecond, 390*time.Millisecond, 95), round(100, 195*time.Millisecond, 390*time.Millisecond, 95)},
	}
	for name, want := range map[string]float64{"workspace": 1000, "ferretdb": 2000, "": 3000} {
		if got := b.CPUPerDelivery(name); got < want-0.01 || got > want+0.01 {
			t.Errorf("CPU per delivery of %q = %.2f µs, want %.0f", name, got, want)
		}
	}
	if err := b.faults(); err == nil || !strings.Contains(err.Error(), "round 1 with webhooks: 5 of 100 events not delivered") {
		t.Errorf("faults: %v", err)
	}
}

// TestReportShowsWebhookDelivery checks the section's rows: both sides'
// changes, each round's deliveries, the CPU per delivery and the two
// replicas' shares.
func TestReportShowsWebhookDelivery(t *testing.T) {
	lat := make([]time.Duration, 100)
	for i := range lat {
		lat[i] = time.Duration(i+1) * time.Millisecond
	}
	changes := func(workspace time.Duration) measurement {
		return measurement{Load: 1.5, Result: &loadgen.Result{Requests: 100, Elapsed: 5 * time.Second, Latencies: lat},
			CPU: []processCPU{{"workspace", workspace}, {"ferretdb", 2 * workspace}, {"bench", time.Second}}}
	}
	delays := []time.Duration{2100 * time.Millisecond, 2200 * time.Millisecond, 2300 * time.Millisecond, 4 * time.Second}
	hooked := changeRound{measurement: changes(200 * time.Millisecond),
		Delivery: &delivery{Recorded: 100, Delivered: 100, Messages: 100, Delays: delays, Span: 4 * time.Second, Drain: 2500 * time.Millisecond, Verified: 5}}
	r := &report{
		Config: config{Round: 5 * time.Second},
		Webhooks: &webhookBench{Workspaces: 100, Rate: 20,
			Reference: []changeRound{{measurement: changes(100 * time.Millisecond)}},
			Hooked:    []changeRound{hooked},
			Replicas: &changeRound{measurement: measurement{Result: &loadgen.Result{Requests: 100}, CPU: []processCPU{{"workspace-1", 300 * time.Millisecond}, {"workspace-2", 250 * time.Millisecond}}},
				Failures: map[int]int{503: 2},
				Delivery: &delivery{Recorded: 98, Delivered: 98, Messages: 98, Delays: delays, BySender: map[string]int{"workspace-1": 50, "workspace-2": 47}, Verified: 5}},
		},
	}
	md := r.Markdown()
	for _, want := range []string{
		"## Webhook delivery",
		"100 workspaces with one webhook each, taking `workspace.updated`, and 100 without",
		"| without webhooks, 1 rounds | 100 | 20.0 | 50.00 ms | 99.00 ms | 0 | **3000** | 1000 | 2000 | 10000 | 1.50 |",
		"| with webhooks, 1 rounds | 100 | 20.0 | 50.00 ms | 99.00 ms | 0 | **6000** | 2000 | 4000 | 10000 | 1.50 |",
		"| round 1 | 100 | 100 | 25.0 | 2200.00 ms | 4000.00 ms | 4000.00 ms | 100 | 0 | 0 | 2.5s |",
		"workspace service **1000 µs**, ferretdb 2000 µs, every server 3000 µs",
		"holds `EVENTS_SETTLE` (2s here)",
		"| workspace-1 | 50 | 51.0% | 300ms |",
		"| workspace-2 | 47 | 48.0% | 250ms |",
		"98 changes acknowledged, 98 of their events delivered (1 by a replica not told apart), 0 messages came again",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
}

// TestSocketInodeReadsProcNetTCP checks the look-up of a connection's
// socket in /proc/net/tcp: by its local and remote ports, in hex.
func TestSocketInodeReadsProcNetTCP(t *testing.T) {
	table := []byte(`  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1111 1 0000000000000000 100 0 0 10 0
   1: 0100007F:D431 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 2222 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 3333 1 0000000000000000 20 4 30 10 -1
`)
	if inode, ok := socketInode(table, 0xD431, 0x1F90); !ok || inode != "2222" {
		t.Errorf("the client's socket: %q, %v; want 2222", inode, ok)
	}
	if inode, ok := socketInode(table, 0x1F90, 0xD431); !ok || inode != "3333" {
		t.Errorf("the server's socket: %q, %v; want 3333", inode, ok)
	}
	if _, ok := socketInode(table, 0xD432, 0x1F90); ok {
		t.Error("found a socket that is not there")
	}
}

// TestReceiverCountsMessagesAndChecksSignatures sends the receiver's
// handler messages signed as the service signs them: a message sent again
// counts once as delivered and once as a duplicate, a change's event is
// found by its request id, and the sampled messages verify with their
// workspace's secret and not with another's.
func TestReceiverCountsMessagesAndChecksSignatures(t *testing.T) {
	rc := &hookReceiver{}
	rc.reset()
	secret, other := webhook.NewSecret(), webhook.NewSecret()
	send := func(msgID, requestID string) {
		body := fmt.Appendf(nil, `{"id":%q,"type":"workspace.updated","workspaceId":"hooked-0001","requestId":%q}`, msgID, requestID)
		req := httptest.NewRequest(http.MethodPost, "/hook", bytes.NewReader(body))
		req.Header = webhook.Headers(msgID, time.Now(), body, secret)
		w := httptest.NewRecorder()
		rc.ServeHTTP(w, req)
		if w.Code != http.StatusNoContent {
			t.Fatalf("answered %d", w.Code)
		}
	}
	send("e1", "whb-1")
	send("e2", "whb-2")
	send("e1", "whb-1")
	got := rc.snapshot()
	if got.Messages != 3 || got.Distinct != 2 || got.Duplicates() != 1 || len(got.ByRequest) != 2 {
		t.Errorf("messages %d, distinct %d, again %d, changes %d; want 3, 2, 1, 2", got.Messages, got.Distinct, got.Duplicates(), len(got.ByRequest))
	}
	if len(got.Sample) != 1 || got.Sample[0].WorkspaceID != "hooked-0001" {
		t.Fatalf("sample %+v, want the first message", got.Sample)
	}
	if n, err := verifySignatures(got.Sample, map[string]string{"hooked-0001": secret.Reveal()}); n != 1 || err != nil {
		t.Errorf("verified %d: %v", n, err)
	}
	if _, err := verifySignatures(got.Sample, map[string]string{"hooked-0001": other.Reveal()}); err == nil {
		t.Error("a message verified with another secret")
	}
	if _, err := verifySignatures(got.Sample, map[string]string{}); err == nil {
		t.Error("a message of a workspace without a webhook passed")
	}
}
