// The sharding report as one HTML page (docs/sharding.md, "Report"):
// report-format=html, or a report file ending in .html; names from the model
// escaped; the same figures as the text report. A format that contradicts
// the file name, an unknown format or a format without a report file is an
// error and writes nothing.
// RUN: ember-opt %s -o /dev/null --ember-plan-sharding="world-size=2 table-sharding=t_a=table_wise@0 report-file=- report-format=html" | FileCheck %s --check-prefix=CHECK-HTML
// RUN: rm -rf %t && mkdir -p %t
// RUN: ember-opt %s -o /dev/null --ember-plan-sharding="world-size=2 table-sharding=t_a=table_wise@0 report-file=%t/report.HTML"
// RUN: FileCheck %s --check-prefix=CHECK-HTML < %t/report.HTML
// RUN: ember-opt %s -o /dev/null --ember-plan-sharding="world-size=2 table-sharding=t_a=table_wise@0 report-file=%t/report.txt"
// RUN: FileCheck %s --check-prefix=CHECK-TEXT < %t/report.txt
// RUN: not ember-opt %s -o /dev/null --ember-plan-sharding="world-size=2 report-file=%t/conflict.html report-format=text" 2>&1 | FileCheck %s --check-prefix=CHECK-CONFLICT
// RUN: not ember-opt %s -o /dev/null --ember-plan-sharding="world-size=2 report-file=%t/unknown.out report-format=pdf" 2>&1 | FileCheck %s --check-prefix=CHECK-UNKNOWN
// RUN: not ember-opt %s -o /dev/null --ember-plan-sharding="world-size=2 report-format=html" 2>&1 | FileCheck %s --check-prefix=CHECK-NOFILE
// RUN: not ls %t/conflict.html %t/unknown.out

// CHECK-HTML: <!DOCTYPE html>
// CHECK-HTML: <span data-key="world_size">2</span>
// CHECK-HTML: <svg id="cost-chart"
// CHECK-HTML: <g class="cost" data-rank="0">
// CHECK-HTML: <svg id="device-chart"
// CHECK-HTML: <table id="ranks">
// CHECK-HTML: <table id="tables">
// CHECK-HTML: <td class="name">t_a</td><td class="num">1000x16</td><td>f32</td><td>sum</td><td class="num">1.0</td><td>table_wise</td><td>fused</td><td>[0]</td>
// CHECK-HTML: <td class="name">&lt;b&gt;&amp;&quot;&#39;</td>
// CHECK-HTML: <table id="placement">
// CHECK-HTML: <li>rank 0: rows 0..999 x columns 0..15 (1000x16)</li>
// CHECK-HTML-NOT: <b>
// CHECK-HTML: </html>

// CHECK-TEXT: Sharding plan: 2 rank(s)
// CHECK-TEXT: Imbalance (max/mean): cost
// CHECK-TEXT: t_a {{ *}}1000x16 f32 {{ *}}sum {{ *}}1.0 {{ *}}table_wise {{ *}}fused {{ *}}[0]
// CHECK-TEXT: <b>&"'

// CHECK-CONFLICT: error: ember-plan-sharding: the report format text contradicts the file name '{{.*}}conflict.html'
// CHECK-UNKNOWN: error: ember-plan-sharding: unknown report format 'pdf' (expected text or html)
// CHECK-NOFILE: error: ember-plan-sharding: report-format needs a report-file

ember.table @t_a : !ember.table<1000x16, f32>
ember.table @"<b>&\"'" : !ember.table<500x8, f32>
func.func @main(%ids: tensor<?xi64>, %lengths: tensor<?xi32>)
    -> !ember.keyed_tensor<["a" : 16, "b" : 8], f32> {
  %kjt = ember.kjt.create values(%ids : tensor<?xi64>) lengths(%lengths : tensor<?xi32>)
      -> !ember.kjt<["a", "b"], values = i64, lengths = i32>
  %t0 = ember.table.ref @t_a : !ember.table<1000x16, f32>
  %t1 = ember.table.ref @"<b>&\"'" : !ember.table<500x8, f32>
  %pooled = ember.embedding_bag_collection %kjt tables(%t0, %t1)
      feature_tables = [0, 1] pooling = [sum, sum]
      : !ember.kjt<["a", "b"], values = i64, lengths = i32>,
        !ember.table<1000x16, f32>, !ember.table<500x8, f32>
      -> !ember.keyed_tensor<["a" : 16, "b" : 8], f32>
  return %pooled : !ember.keyed_tensor<["a" : 16, "b" : 8], f32>
}
