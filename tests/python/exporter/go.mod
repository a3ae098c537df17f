module tern.test/exporter

go 1.24

require github.com/oliver006/redis_exporter v1.74.0
