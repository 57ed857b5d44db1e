package main

import (
	"context"
	"encoding/base64"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/nodewright/nodewright/shared/flows/podwebhook"
)

// resultSink receives what became of each request (a podwebhook Result) and how long answering took, for
// the webhook's metrics; nil drops it.
type resultSink func(result string, took time.Duration)

// handler maps a Function URL request to the intake and its answer back. It never returns an error: a
// Lambda error would be an HTTP 502 the API server has to wait for and then ignore anyway.
func handler(in *podwebhook.Intake, report resultSink) func(context.Context, events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
	return func(ctx context.Context, req events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
		start := time.Now()
		res := handle(ctx, in, req)
		if report != nil {
			report(res.Result, time.Since(start))
		}
		contentType := "text/plain"
		if res.Status == http.StatusOK {
			contentType = "application/json"
		}
		return events.LambdaFunctionURLResponse{StatusCode: res.Status, Body: string(res.Body),
			Headers: map[string]string{"Content-Type": contentType}}, nil
	}
}

// handle decodes a Function URL body and hands it to the intake.
func handle(ctx context.Context, in *podwebhook.Intake, req events.LambdaFunctionURLRequest) podwebhook.Response {
	body := []byte(req.Body)
	if req.IsBase64Encoded {
		decoded, err := base64.StdEncoding.DecodeString(req.Body)
		if err != nil {
			return podwebhook.Response{Status: http.StatusBadRequest, Body: []byte("body is not valid base64"), Result: podwebhook.ResultMalformed}
		}
		body = decoded
	}
	return in.Handle(ctx, req.RawPath, body)
}
