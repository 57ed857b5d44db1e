package faults

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// AWSClient wraps inner (nil: the SDK's default client) for aws.Config.HTTPClient. eligible says which
// calls are the functions' own (nil: every call not Exempt); the others pass untouched and uncounted.
// Install it on the configuration the functions' clients are built from, alongside any APIOptions.
func (i *Injector) AWSClient(inner aws.HTTPClient, eligible func(context.Context) bool) aws.HTTPClient {
	if inner == nil {
		inner = awshttp.NewBuildableClient()
	}
	return &awsClient{inj: i, inner: inner, eligible: eligible}
}

type awsClient struct {
	inj      *Injector
	inner    aws.HTTPClient
	eligible func(context.Context) bool
}

func (c *awsClient) Do(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if exempt(ctx) || (c.eligible != nil && !c.eligible(ctx)) {
		return c.inner.Do(req)
	}
	call := Call{Target: AWS, Service: awsmiddleware.GetServiceID(ctx), Operation: awsmiddleware.GetOperationName(ctx)}
	rule, ok := c.inj.Decide(call)
	if !ok {
		return c.inner.Do(req)
	}
	switch rule.Kind {
	case Latency:
		if err := wait(ctx, rule.Delay); err != nil {
			discard(req)
			return nil, &url.Error{Op: urlOp(req.Method), URL: req.URL.String(), Err: err}
		}
		return c.inner.Do(req)
	case Drop:
		discard(req)
		return nil, &url.Error{Op: urlOp(req.Method), URL: req.URL.String(), Err: &Error{Kind: Drop, Call: call, Err: reset()}}
	default:
		discard(req)
		return awsError(req, call, rule.Kind), nil
	}
}

// urlOp is the Op http.Client puts in its errors ("Post").
func urlOp(method string) string {
	if method == "" {
		return "Get"
	}
	return method[:1] + strings.ToLower(method[1:])
}

// awsError is the error response the call's service gives for kind, in its protocol's shape.
func awsError(req *http.Request, call Call, kind Kind) *http.Response {
	msg := fmt.Sprintf("%s: %s on %s %s", Marker, kind, call.Service, call.Operation)
	h := http.Header{}
	h.Set("X-Amzn-Requestid", "00000000-fault-0000-0000-000000000000")
	switch call.Service {
	case "EC2": // ec2query
		code, status := "RequestLimitExceeded", http.StatusServiceUnavailable
		if kind == ServerError {
			code, status = "InternalError", http.StatusInternalServerError
		}
		h.Set("Content-Type", "text/xml;charset=UTF-8")
		return respond(req, status, h, []byte(fmt.Sprintf(
			`<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors><RequestID>fault</RequestID></Response>`,
			code, xmlEscape(msg))))
	case "IAM", "STS": // awsquery
		typ, code, status := "Sender", "Throttling", http.StatusBadRequest
		if kind == ServerError {
			typ, code, status = "Receiver", "ServiceFailure", http.StatusInternalServerError
		}
		h.Set("Content-Type", "text/xml")
		return respond(req, status, h, []byte(fmt.Sprintf(
			`<ErrorResponse><Error><Type>%s</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>fault</RequestId></ErrorResponse>`,
			typ, code, xmlEscape(msg))))
	}
	// The JSON protocols (awsJson1_0: DynamoDB, SQS; awsJson1_1 and restJson for the rest).
	code, status := "ThrottlingException", http.StatusBadRequest
	switch {
	case kind == ServerError && call.Service == "DynamoDB":
		code, status = "InternalServerError", http.StatusInternalServerError
	case kind == ServerError:
		code, status = "InternalFailure", http.StatusInternalServerError
	case call.Service == "DynamoDB":
		code = "ProvisionedThroughputExceededException"
	case call.Service == "SQS":
		code = "RequestThrottled"
	}
	ct := "application/x-amz-json-1.1"
	if call.Service == "DynamoDB" || call.Service == "SQS" {
		ct = "application/x-amz-json-1.0"
	}
	h.Set("Content-Type", ct)
	h.Set("X-Amzn-Errortype", code)
	body, _ := json.Marshal(map[string]string{"__type": "com.amazonaws." + strings.ToLower(call.Service) + "#" + code, "message": msg})
	return respond(req, status, h, body)
}

func xmlEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
