package main

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/metrics"
)

// dashboardWidget is one widget of a synthesized dashboard body.
type dashboardWidget struct {
	Type       string                 `json:"type"`
	X          int                    `json:"x"`
	Y          int                    `json:"y"`
	Width      int                    `json:"width"`
	Height     int                    `json:"height"`
	Properties map[string]interface{} `json:"properties"`
}

// dashboardBody returns the only dashboard's name and body, with each CloudFormation reference inside
// the body (function and queue names, the region) replaced by TOKEN, and its widgets sorted by position.
func dashboardBody(t *testing.T, template assertions.Template) (string, string, []dashboardWidget) {
	t.Helper()
	_, props := toCfn(t, template).one(t, "AWS::CloudWatch::Dashboard", "Dashboard")
	var body string
	switch b := props["DashboardBody"].(type) {
	case string:
		body = b
	case map[string]interface{}:
		join := b["Fn::Join"].([]interface{})
		var sb strings.Builder
		for _, part := range join[1].([]interface{}) {
			if s, ok := part.(string); ok {
				sb.WriteString(s)
			} else {
				sb.WriteString("TOKEN")
			}
		}
		body = sb.String()
	}
	var doc struct {
		Widgets []dashboardWidget `json:"widgets"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &doc), body)
	sort.SliceStable(doc.Widgets, func(i, j int) bool {
		a, b := doc.Widgets[i], doc.Widgets[j]
		return a.Y < b.Y || a.Y == b.Y && a.X < b.X
	})
	name, _ := props["DashboardName"].(string)
	return name, body, doc.Widgets
}

func TestDashboard(t *testing.T) {
	template, _ := synth(t)
	name, body, widgets := dashboardBody(t, template)

	t.Run("is named for the cluster", func(t *testing.T) {
		assert.Equal(t, "Nodewright-unit", name)
	})

	t.Run("has a headed section per concern, in order", func(t *testing.T) {
		var headings []string
		perSection := map[string]int{}
		section := ""
		for _, w := range widgets {
			if w.Type == "text" {
				md := w.Properties["markdown"].(string)
				lines := strings.Split(md, "\n")
				require.Len(t, lines, 2, "a heading and one line: %q", md)
				section = strings.TrimPrefix(lines[0], "#### ")
				headings = append(headings, section)
				assert.NotEmpty(t, lines[1], "section %s says what it means", section)
				assert.Equal(t, 24, w.Width, "section %s's heading spans the dashboard", section)
				continue
			}
			require.NotEmpty(t, section, "a %s widget before the first heading", w.Type)
			perSection[section]++
		}
		assert.Equal(t, []string{"Alarms", "Scale-up", "Capacity", "Consolidation", "Interruption", "Termination", "Plumbing"}, headings)
		assert.Equal(t, map[string]int{"Alarms": 1, "Scale-up": 8, "Capacity": 9, "Consolidation": 9, "Interruption": 4, "Termination": 7, "Plumbing": 7},
			perSection)
		assert.Len(t, widgets, 52)
	})

	t.Run("widgets stay on the grid without overlapping", func(t *testing.T) {
		for i, w := range widgets {
			assert.LessOrEqual(t, w.X+w.Width, 24, "widget %d (%v) ends past the grid", i, w.Properties["title"])
			for _, o := range widgets[:i] {
				overlap := w.X < o.X+o.Width && o.X < w.X+w.Width && w.Y < o.Y+o.Height && o.Y < w.Y+w.Height
				assert.False(t, overlap, "%v overlaps %v", w.Properties["title"], o.Properties["title"])
			}
		}
	})

	t.Run("reads every metric the functions write", func(t *testing.T) {
		all, err := json.Marshal(template.ToJSON())
		require.NoError(t, err)
		for m := range metrics.Catalog {
			// A plain metric's name is a JSON string; a search names it in its expression. An alarm-only
			// metric is in the template's alarms.
			assert.Regexp(t, `"`+m+`"|\\"`+m+`\\"`, body+string(all), "metric %s", m)
		}
		for old := range metrics.Renamed {
			assert.NotRegexp(t, `"`+old+`"|\\"`+old+`\\"`, body, "the old name %s is read nowhere", old)
		}
		assert.NotContains(t, body, "ClusterName", "dimensions are lower-case")
	})

	t.Run("finds NodePools, resources, reasons and codes at run time", func(t *testing.T) {
		for _, search := range []string{
			`SEARCH('{Nodewright,cluster,nodepool} MetricName=\"nodeclaims_created_total\" cluster=\"unit\"', 'Sum')`,
			`SEARCH('{Nodewright,cluster,nodepool,resource_type} MetricName=\"nodepools_usage\" cluster=\"unit\" resource_type=\"cpu\"', 'Maximum')`,
			`SEARCH('{Nodewright,cluster,nodepool,resource_type} MetricName=\"nodepools_limit\" cluster=\"unit\" resource_type=\"memory\"', 'Maximum')`,
			`MetricName=\"nodepools_usage\" cluster=\"unit\" NOT resource_type=\"cpu\" NOT resource_type=\"memory\"`,
			`SEARCH('{Nodewright,cluster,nodepool,resource_type} MetricName=\"nodes_allocatable\" cluster=\"unit\" resource_type=\"cpu\"', 'Maximum')`,
			`SEARCH('{Nodewright,cluster,nodepool,resource_type} MetricName=\"nodes_total_pod_requests\" cluster=\"unit\" resource_type=\"memory\"', 'Maximum')`,
			`SEARCH('{Nodewright,cluster,resource_type} MetricName=\"cluster_utilization_percent\"`,
			`SEARCH('{Nodewright,cluster,instance_type,capacity_type,zone} MetricName=\"cloudprovider_instance_type_offering_price_estimate\"`,
			`SEARCH('{Nodewright,cluster,message_type} MetricName=\"interruption_received_messages_total\"`,
			`SEARCH('{Nodewright,cluster,nodepool,reason} MetricName=\"nodeclaims_disrupted_total\"`,
			`SEARCH('{Nodewright,cluster,nodepool} MetricName=\"nodes_termination_duration_seconds\" cluster=\"unit\"', 'p99')`,
			`SEARCH('{Nodewright,cluster,nodepool,zone} MetricName=\"nodes_terminated_total\"`,
			`SEARCH('{Nodewright,cluster,reason} MetricName=\"pods_drained_total\"`,
			`SEARCH('{Nodewright,cluster,code} MetricName=\"pods_eviction_requests_total\"`,
			`SEARCH('{Nodewright,cluster,result} MetricName=\"webhook_requests_total\"`,
		} {
			assert.Contains(t, body, search)
		}
		assert.Contains(t, body, `${PROP('Dim.nodepool')}`, "search results are labelled by their dimensions")
		assert.Contains(t, body, `"cluster","unit"`, "plain metrics are the cluster's")
	})

	t.Run("plumbing reads each function's and queue's own metrics", func(t *testing.T) {
		for _, m := range []string{`"AWS/Lambda","Invocations"`, `"AWS/Lambda","Errors"`, `"AWS/Lambda","Throttles"`,
			`"AWS/Lambda","Duration"`, `"AWS/SQS","ApproximateAgeOfOldestMessage"`, `"AWS/SQS","ApproximateNumberOfMessagesVisible"`} {
			assert.Contains(t, body, m)
		}
		for _, label := range []string{"Webhook", "Provisioner", "Lifecycle", "Interruption", "Termination", "Disruption",
			"Provisioning DLQ", "Interruption DLQ", "Termination DLQ", "DisruptionWake DLQ"} {
			assert.Contains(t, body, `"label":"`+label+`"`)
		}
		assert.Equal(t, 6*4, strings.Count(body, `"AWS/Lambda",`), "four graphs of six functions")
		assert.Equal(t, 4*3, strings.Count(body, `"AWS/SQS",`), "age and visible of four queues, visible of four DLQs")
	})

	t.Run("shows every alarm", func(t *testing.T) {
		status := widgets[1]
		require.Equal(t, "alarm", status.Type)
		assert.Len(t, status.Properties["alarms"], 21)
	})
}
