// Six embedding tables in one collection for the sharding report tests
// (html_report_test.py): f32, f16 and int8_rowwise tables from 1,000 to 8
// million rows, sum, mean and max pooling, and a table named <script>&"'
// (names are user input: the HTML report must escape it).
ember.table @t_user : !ember.table<8000000x128, f32>
ember.table @t_item : !ember.table<4000000x64, f32>
ember.table @"<script>&\"'" : !ember.table<2000000x64, int8_rowwise>
ember.table @t_cat : !ember.table<1000x32, f32>
ember.table @t_geo : !ember.table<500000x32, f16>
ember.table @t_hist : !ember.table<3000000x64, f32>
func.func @main(%ids: tensor<?xi64>, %lengths: tensor<?xi32>)
    -> !ember.keyed_tensor<["user" : 128, "item" : 64, "esc" : 64, "cat" : 32, "geo" : 32, "hist" : 64], f32> {
  %kjt = ember.kjt.create values(%ids : tensor<?xi64>) lengths(%lengths : tensor<?xi32>)
      -> !ember.kjt<["user", "item", "esc", "cat", "geo", "hist"], values = i64, lengths = i32>
  %t0 = ember.table.ref @t_user : !ember.table<8000000x128, f32>
  %t1 = ember.table.ref @t_item : !ember.table<4000000x64, f32>
  %t2 = ember.table.ref @"<script>&\"'" : !ember.table<2000000x64, int8_rowwise>
  %t3 = ember.table.ref @t_cat : !ember.table<1000x32, f32>
  %t4 = ember.table.ref @t_geo : !ember.table<500000x32, f16>
  %t5 = ember.table.ref @t_hist : !ember.table<3000000x64, f32>
  %pooled = ember.embedding_bag_collection %kjt tables(%t0, %t1, %t2, %t3, %t4, %t5)
      feature_tables = [0, 1, 2, 3, 4, 5] pooling = [sum, sum, max, mean, sum, sum]
      : !ember.kjt<["user", "item", "esc", "cat", "geo", "hist"], values = i64, lengths = i32>,
        !ember.table<8000000x128, f32>, !ember.table<4000000x64, f32>,
        !ember.table<2000000x64, int8_rowwise>, !ember.table<1000x32, f32>,
        !ember.table<500000x32, f16>, !ember.table<3000000x64, f32>
      -> !ember.keyed_tensor<["user" : 128, "item" : 64, "esc" : 64, "cat" : 32, "geo" : 32, "hist" : 64], f32>
  return %pooled : !ember.keyed_tensor<["user" : 128, "item" : 64, "esc" : 64, "cat" : 32, "geo" : 32, "hist" : 64], f32>
}
