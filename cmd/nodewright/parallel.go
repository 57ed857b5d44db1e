package main

import (
	"runtime"
	"sync"
)

// forEachParallel calls fn(i) for every i in [0, n) on as many goroutines as there are CPUs and returns
// when all calls have. fn must be safe to call concurrently for different i.
func forEachParallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
